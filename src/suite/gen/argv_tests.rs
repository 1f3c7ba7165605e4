//! The argv each generator gets for a suite point, pinned: the first point of every
//! load of every example suite file (examples/*.toml, each file pinned), and points of
//! each registered command and each external generator its protocol declares (the
//! pins are checked against `registry::REGISTRY`: a command or a generator with no
//! pinned argv fails here).

use super::{invocation, Target};
use crate::suite::plan::{self, Load};
use std::path::Path;

fn argv_of(load: &Load) -> String {
    let t = Target {
        exe: Path::new("/wb"),
        host: "127.0.0.1",
        port: 9000,
        prefix: Path::new("/out/p"),
    };
    invocation(load, &load.points[0], load.stop, &t)
        .argv
        .join(" ")
}

fn first_points(file: &str) -> Vec<String> {
    let suite = plan::load(Path::new(file)).expect("the example suite parses");
    suite.loads.iter().map(argv_of).collect()
}

fn inline(load: &str) -> String {
    let text = format!("[[server]]\nname = \"a\"\ncommand = \"x {{port}}\"\n[[load]]\n{load}");
    let suite = plan::parse(Path::new("t.toml"), &text).expect("the suite parses");
    argv_of(&suite.loads[0])
}

/// The example suite files, by name.
fn examples() -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir("examples")
        .expect("examples/")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".toml"))
        .map(|n| format!("examples/{n}"))
        .collect();
    files.sort();
    files
}

#[test]
fn example_suites_first_points_run_the_same_argv() {
    let pinned: [(&str, &[&str]); 8] = [
        ("examples/amqp-proxy.toml", &[
            "/wb amqp amqp://guest:guest@127.0.0.1:9000/ --mode publish -t 1 -c 1 --size 100 -d 3000ms --timeout 10000ms --json /out/p.json -q",
            "/wb amqp amqp://guest:guest@127.0.0.1:9000/ --mode publish -t 1 -c 1 --size 100 -d 3000ms --timeout 10000ms --json /out/p.json -q --confirm",
        ]),
        ("examples/echo-servers.toml", &[
            "/wb echo 127.0.0.1:9000 -t 1 -c 1 --pipeline 1 --size 31 -d 5000ms --timeout 10000ms --json /out/p.json -q",
        ]),
        ("examples/h2-grpc-generators.toml", &[
            "/wb http http://127.0.0.1:9000/ -t 1 -c 10 -m GET --h2 --max-streams 10 -d 3000ms --timeout 10000ms --json /out/p.json -q",
            "h2load -c 10 -t 1 -m 10 -D 3 --log-file /out/p.log http://127.0.0.1:9000/",
            "/wb grpc 127.0.0.1:9000 --call bench.Echo/Say --data {\"name\": \"ab\", \"n\": 3} --proto tests/peers/bench.proto -t 1 -c 10 -m 10 -d 3000ms --timeout 10000ms --json /out/p.json -q",
            "ghz --insecure --call bench.Echo/Say -d {\"name\": \"ab\", \"n\": 3} --proto tests/peers/bench.proto --connections 10 -c 100 --cpus 1 -z 3000ms --duration-stop wait -t 10000ms -O json -o /out/p.ghz.json 127.0.0.1:9000",
        ]),
        ("examples/http-frameworks.toml", &[
            "/wb http http://127.0.0.1:9000/ -t 1 -c 100 -m POST --pipeline 1 --body-size 1024 -d 5000ms --timeout 10000ms --json /out/p.json -q",
            "wrk -t 1 -c 100 -d 5s --timeout 10s --latency -s /out/p.lua http://127.0.0.1:9000/",
        ]),
        ("examples/limits.toml", &[
            "/wb echo 127.0.0.1:9000 -t 1 -c 10 --pipeline 1 --size 64 --stages 3s:20000,5s:20000,2s:0 --timeout 10000ms --json /out/p.json -q",
            "/wb http http://127.0.0.1:9000/ -t 1 -c 50 -m GET --pipeline 1 --stages 2s:10000,5s:10000 --timeout 10000ms --json /out/p.json -q",
            "/wb echo 127.0.0.1:9000 -t 1 -c 50 --pipeline 1 --size 64 --search p99<5ms,errors<0.1% --step-duration 2000ms -R 200000 --timeout 10000ms --json /out/p.json -q",
        ]),
        ("examples/quick.toml", &[
            "/wb echo 127.0.0.1:9000 -t 1 -c 1 --pipeline 1 --size 64 -d 3000ms --timeout 10000ms --json /out/p.json -q",
            "/wb http http://127.0.0.1:9000/ -t 1 -c 50 -m POST --pipeline 1 --body-size 1024 -d 3000ms --timeout 10000ms --json /out/p.json -q",
        ]),
        ("examples/redis-servers.toml", &[
            "/wb redis 127.0.0.1:9000 -t 1 -c 1 --pipeline 1 --size 3 -d 3000ms --timeout 10000ms --json /out/p.json -q",
        ]),
        ("examples/ws-servers.toml", &[
            "/wb ws ws://127.0.0.1:9000/ -t 1 -c 10 --pipeline 1 --size 64 -d 4000ms --timeout 10000ms --json /out/p.json -q",
        ]),
    ];
    for (file, want) in pinned {
        assert_eq!(first_points(file), want, "{file}");
    }
    // Every example file is pinned.
    let files: Vec<&str> = pinned.iter().map(|(f, _)| *f).collect();
    assert_eq!(
        files,
        examples(),
        "an example suite file without pinned argv"
    );
}

#[test]
fn other_protocols_and_generators_run_the_same_argv() {
    let pinned = [
        ("protocol = \"connect\"\nconnections = [300]\nduration = \"2s\"\n",
         "/wb connect 127.0.0.1:9000 -n 300 --hold 2000ms --json /out/p.json -q"),
        ("protocol = \"connect\"\nconnections = [5]\ncount = 7\nrate = [100.0]\n",
         "/wb connect 127.0.0.1:9000 -n 5 -R 100 --json /out/p.json -q"),
        ("protocol = \"http\"\ngenerator = \"ab\"\nconnections = [4]\nbody_size = [\"1k\"]\nhttp = { method = \"PUT\" }\ncount = 100\n",
         "ab -k -q -c 4 -n 100 -s 10 -g /out/p.tsv -u /out/p.body -T text/plain http://127.0.0.1:9000/"),
        ("protocol = \"http\"\ngenerator = \"h2load\"\nconnections = [4]\npipeline = [8]\nduration = \"3s\"\n[load.http]\npath = \"/x\"\n",
         "h2load --h1 -c 4 -t 1 -m 8 -D 3 --log-file /out/p.log http://127.0.0.1:9000/x"),
        ("protocol = \"http\"\ngenerator = \"h2load\"\nconnections = [4]\npipeline = [8]\ncount = 100\nhttp = { version = \"2\" }\n",
         "h2load -c 4 -t 1 -m 8 -n 100 --log-file /out/p.log http://127.0.0.1:9000/"),
        ("protocol = \"http\"\nconnections = [4]\npipeline = [8]\nbody_size = [\"1k\"]\nhttp = { version = \"2\" }\n",
         "/wb http http://127.0.0.1:9000/ -t 1 -c 4 -m POST --h2 --max-streams 8 --body-size 1024 -d 5000ms --timeout 10000ms --json /out/p.json -q"),
        ("protocol = \"grpc\"\ngenerator = \"ghz\"\nconnections = [2]\npipeline = [4]\ncount = 100\ngrpc = { call = \"bench.Echo/Say\", proto = \"/p/bench.proto\", data = '{\"name\": \"ab\"}' }\n",
         "ghz --insecure --call bench.Echo/Say -d {\"name\": \"ab\"} --proto /p/bench.proto --connections 2 -c 8 --cpus 1 -n 100 -t 10000ms -O json -o /out/p.ghz.json 127.0.0.1:9000"),
        ("protocol = \"grpc\"\ngenerator = \"ghz\"\nconnections = [3]\nduration = \"2s\"\ngrpc = { proto = \"/p/b.proto\", data_file = \"/p/req.bin\" }\n",
         "ghz --insecure --call wirebench.Echo/Call -B /p/req.bin --proto /p/b.proto --connections 3 -c 3 --cpus 1 -z 2000ms --duration-stop wait -t 10000ms -O json -o /out/p.ghz.json 127.0.0.1:9000"),
        ("protocol = \"echo\"\nconnections = [6]\nthreads = 4\nrate = [250.5]\ncount = 9\nextra_args = [\"--tls\"]\n",
         "/wb echo 127.0.0.1:9000 -t 3 -c 6 --pipeline 1 --size 64 -n 9 -R 250.5 --timeout 10000ms --json /out/p.json -q --tls"),
        ("protocol = \"amqp\"\nconnections = [2]\nbody_size = [\"100\"]\nduration = \"1s\"\n",
         "/wb amqp amqp://guest:guest@127.0.0.1:9000/ --mode publish -t 1 -c 2 --size 100 -d 1000ms --timeout 10000ms --json /out/p.json -q"),
        ("protocol = \"http\"\nconnections = [2]\n",
         "/wb http http://127.0.0.1:9000/ -t 1 -c 2 -m GET --pipeline 1 -d 5000ms --timeout 10000ms --json /out/p.json -q"),
        ("protocol = \"http\"\ngenerator = \"wrk\"\nconnections = [8]\nthreads = 2\nhttp = { method = \"GET\", path = \"/bytes/10\" }\n",
         "wrk -t 2 -c 8 -d 5s --timeout 10s --latency -s /out/p.lua http://127.0.0.1:9000/bytes/10"),
        ("protocol = \"redis\"\nconnections = [4]\npipeline = [16]\nbody_size = [\"100\"]\ncount = 1000\n",
         "/wb redis 127.0.0.1:9000 -t 1 -c 4 --pipeline 16 --size 100 -n 1000 --timeout 10000ms --json /out/p.json -q"),
        ("protocol = \"ws\"\nconnections = [3]\nws = { path = \"/chat\" }\n",
         "/wb ws ws://127.0.0.1:9000/chat -t 1 -c 3 --pipeline 1 --size 64 -d 5000ms --timeout 10000ms --json /out/p.json -q"),
        ("protocol = \"grpc\"\nconnections = [3]\npipeline = [10]\ngrpc = { call = \"a.B/C\" }\n",
         "/wb grpc 127.0.0.1:9000 --call a.B/C -t 1 -c 3 -m 10 -d 5000ms --timeout 10000ms --json /out/p.json -q"),
    ];
    for (load, want) in pinned {
        assert_eq!(inline(load), want, "{load}");
    }
    // Each registered command, and each external generator its protocol declares,
    // has a pinned argv here or in an example.
    let mut argvs: Vec<String> = pinned.iter().map(|(_, a)| a.to_string()).collect();
    for f in examples() {
        argvs.extend(first_points(&f));
    }
    for e in crate::registry::REGISTRY {
        let wb = format!("/wb {} ", e.name());
        assert!(
            argvs.iter().any(|a| a.starts_with(&wb)),
            "no pinned argv of {}",
            e.name()
        );
        for g in e.suite_generators() {
            let tool = format!("{g} ");
            assert!(
                argvs.iter().any(|a| a.starts_with(&tool)),
                "no pinned argv of {g}"
            );
        }
    }
}
