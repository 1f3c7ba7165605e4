"""A real AMQP client (pika) against `wirebench serve amqp`: handshake, exchange and
queue declares (one server-named), a bind, qos, publisher confirms, N confirmed
publishes, a clean close. Prints one JSON line with what pika saw.
usage: pika_publisher.py PORT MESSAGES"""
import json
import sys

import pika

port, count = int(sys.argv[1]), int(sys.argv[2])
params = pika.ConnectionParameters(
    host="127.0.0.1", port=port, credentials=pika.PlainCredentials("guest", "guest"),
    connection_attempts=1, socket_timeout=10, blocked_connection_timeout=10)
conn = pika.BlockingConnection(params)
product = conn._impl.server_properties.get("product")
if isinstance(product, bytes):
    product = product.decode()
ch = conn.channel()
ch.exchange_declare(exchange="wb.x", exchange_type="direct")
named = ch.queue_declare(queue="wb.q").method.queue
generated = ch.queue_declare(queue="", exclusive=True).method.queue
ch.queue_bind(queue=named, exchange="wb.x", routing_key="k")
ch.basic_qos(prefetch_count=10)
ch.confirm_delivery()
confirmed = 0
for i in range(count):
    # With confirms on, basic_publish returns once the broker acked (raises on nack).
    ch.basic_publish(exchange="wb.x", routing_key="k", body=b"x" * (i % 300))
    confirmed += 1
ch.close()
conn.close()
print(json.dumps({
    "named": named, "generated": generated, "confirmed": confirmed,
    "server_product": product,
}))
