//! The argv each generator gets for a suite point, pinned: the first point of every
//! load of every example suite file (examples/*.toml), and one point of each
//! protocol and external generator the examples do not use.

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

#[test]
fn example_suites_first_points_run_the_same_argv() {
    let pinned: [(&str, &[&str]); 4] = [
        ("examples/amqp-proxy.toml", &[
            "/wb amqp amqp://guest:guest@127.0.0.1:9000/ --mode publish -t 1 -c 1 --size 100 -d 3000ms --timeout 10000ms --json /out/p.json -q",
            "/wb amqp amqp://guest:guest@127.0.0.1:9000/ --mode publish -t 1 -c 1 --size 100 -d 3000ms --timeout 10000ms --json /out/p.json -q --confirm",
        ]),
        ("examples/echo-servers.toml", &[
            "/wb echo 127.0.0.1:9000 -t 1 -c 1 --pipeline 1 --size 31 -d 5000ms --timeout 10000ms --json /out/p.json -q",
        ]),
        ("examples/http-frameworks.toml", &[
            "/wb http http://127.0.0.1:9000/ -t 1 -c 100 -m POST --pipeline 1 --body-size 1024 -d 5000ms --timeout 10000ms --json /out/p.json -q",
            "wrk -t 1 -c 100 -d 5s --timeout 10s --latency -s /out/p.lua http://127.0.0.1:9000/",
        ]),
        ("examples/quick.toml", &[
            "/wb echo 127.0.0.1:9000 -t 1 -c 1 --pipeline 1 --size 64 -d 3000ms --timeout 10000ms --json /out/p.json -q",
            "/wb http http://127.0.0.1:9000/ -t 1 -c 50 -m POST --pipeline 1 --body-size 1024 -d 3000ms --timeout 10000ms --json /out/p.json -q",
        ]),
    ];
    for (file, want) in pinned {
        assert_eq!(first_points(file), want, "{file}");
    }
}

#[test]
fn other_protocols_and_generators_run_the_same_argv() {
    let pinned = [
        ("protocol = \"connect\"\nconnections = [300]\nduration = \"2s\"\n",
         "/wb connect 127.0.0.1:9000 -n 300 --hold 2000ms --json /out/p.json -q"),
        ("protocol = \"connect\"\nconnections = [5]\ncount = 7\nrate = [100.0]\n",
         "/wb connect 127.0.0.1:9000 -n 5 -R 100 --json /out/p.json -q"),
        ("protocol = \"http\"\ngenerator = \"ab\"\nconnections = [4]\nbody_size = [\"1k\"]\nmethod = \"PUT\"\ncount = 100\n",
         "ab -k -q -c 4 -n 100 -s 10 -g /out/p.tsv -u /out/p.body -T text/plain http://127.0.0.1:9000/"),
        ("protocol = \"http\"\ngenerator = \"h2load\"\nconnections = [4]\npipeline = [8]\nduration = \"3s\"\npath = \"/x\"\n",
         "h2load --h1 -c 4 -t 1 -m 8 -D 3 --log-file /out/p.log http://127.0.0.1:9000/x"),
        ("protocol = \"echo\"\nconnections = [6]\nthreads = 4\nrate = [250.5]\ncount = 9\nextra_args = [\"--tls\"]\n",
         "/wb echo 127.0.0.1:9000 -t 3 -c 6 --pipeline 1 --size 64 -n 9 -R 250.5 --timeout 10000ms --json /out/p.json -q --tls"),
        ("protocol = \"amqp\"\nconnections = [2]\nbody_size = [\"100\"]\nduration = \"1s\"\n",
         "/wb amqp amqp://guest:guest@127.0.0.1:9000/ --mode publish -t 1 -c 2 --size 100 -d 1000ms --timeout 10000ms --json /out/p.json -q"),
        ("protocol = \"http\"\nconnections = [2]\n",
         "/wb http http://127.0.0.1:9000/ -t 1 -c 2 -m GET --pipeline 1 -d 5000ms --timeout 10000ms --json /out/p.json -q"),
    ];
    for (load, want) in pinned {
        assert_eq!(inline(load), want, "{load}");
    }
}
