//! A protocol's own figures (HTTP status classes, AMQP broker closes, Redis error
//! replies), kept per load worker and per server thread, merged exactly over workers,
//! threads, processes and shards: sums, never averages. Below both the engine and the
//! server, which fill them through their session seams.

pub trait Figures:
    Default + Clone + Send + serde::Serialize + serde::de::DeserializeOwned + 'static
{
    fn merge(&mut self, other: &Self);
}

impl Figures for () {
    fn merge(&mut self, _other: &()) {}
}
