#!/usr/bin/python3
"""Raw probes of the rabbitmq profile: each switch (and each place the adapter stands in for
the engine) shown on a real rabbitmq-server through pika alone, no kit code in between.

    probes.py --url amqp://guest:guest@127.0.0.1:PORT/%2F NAME

Prints what the server did and exits 0 when it did what the profile says, 1 when not (the
switch would be wrong), 2 on bad usage. conformance/tests/rabbitmq_probe_test.cpp runs each
on a rabbitmq-server of its own (RabbitMqRawProbe.*).
"""
import argparse
import os
import sys
import time

import pika
import pika.exceptions

PROBES = {}


def probe(fn):
    PROBES[fn.__name__] = fn
    return fn


class Server:
    def __init__(self, url):
        self.connection = pika.BlockingConnection(pika.URLParameters(url))
        self.ch = self.connection.channel()
        self.ch.confirm_delivery()
        self.prefix = "probe%d" % os.getpid()

    def name(self, n):
        return self.prefix + "." + n

    def quorum(self, name, **args):
        arguments = {"x-queue-type": "quorum"}
        arguments.update(args)
        self.ch.queue_declare(self.name(name), durable=True, arguments=arguments)
        return self.name(name)

    def publish(self, queue, body, exchange="", headers=None):
        self.ch.basic_publish(exchange, queue if not exchange else "", body,
                              pika.BasicProperties(delivery_mode=2, headers=headers))

    def drain(self, queue, ack=True):
        """Every ready message, in the order basic.get hands them out."""
        out = []
        while True:
            method, props, body = self.ch.basic_get(queue)
            if method is None:
                return out
            out.append((body, method, props))
            if ack:
                self.ch.basic_ack(method.delivery_tag)


def bodies(got):
    return [b.decode() for b, _, _ in got]


def expect(what, seen, wanted):
    print("%s: %s (the profile says %s)" % (what, seen, wanted))
    return seen == wanted


@probe
def starts_at_the_end(s):
    """R4: a queue bound to an exchange holds nothing published before it was bound."""
    ex = s.name("starts")
    s.ch.exchange_declare(ex, "headers", durable=True)
    s.publish(None, b"before", exchange=ex)
    q = s.quorum("starts.q")
    s.ch.queue_bind(q, ex, arguments={"x-match": "all"})
    s.publish(None, b"after", exchange=ex)
    return expect("a queue bound after 'before' was published gets", bodies(s.drain(q)), ["after"])


@probe
def returned_to_the_back(s):
    """R5: without a delivery limit a returned message goes behind what is queued; with one,
    returned messages come first."""
    ok = True
    for limit, wanted in ((None, ["b", "n1", "a", "n2"]), (3, ["a", "b", "n1", "n2"])):
        args = {} if limit is None else {"x-delivery-limit": limit}
        q = s.quorum("back.%s" % limit, **args)
        s.publish(q, b"a")
        s.publish(q, b"b")
        method, _, _ = s.ch.basic_get(q)
        s.publish(q, b"n1")
        s.ch.basic_nack(method.delivery_tag, requeue=True)
        s.publish(q, b"n2")
        ok &= expect("delivery limit %s: a taken, n1 published, a nacked, n2 published; then"
                     % limit, bodies(s.drain(q)), wanted)
    return ok


@probe
def redelivery_in_return_order(s):
    """R5: returned messages come back in the order they were returned, not by offset."""
    ok = True
    for limit in (None, 5):
        args = {} if limit is None else {"x-delivery-limit": limit}
        q = s.quorum("order.%s" % limit, **args)
        for b in (b"a", b"b", b"c"):
            s.publish(q, b)
        got = [s.ch.basic_get(q)[0] for _ in range(3)]
        for method in reversed(got):
            s.ch.basic_nack(method.delivery_tag, requeue=True)
        s.publish(q, b"d")
        ok &= expect("delivery limit %s: a, b, c taken and nacked c, b, a; then d published; then"
                     % limit, bodies(s.drain(q)), ["c", "b", "a", "d"])
    return ok


@probe
def no_server_deadline(s):
    """R11: the server keeps no deadline of a held message: it stays with its channel."""
    q = s.quorum("deadline")
    s.publish(q, b"held")
    method, _, _ = s.ch.basic_get(q)
    time.sleep(2)
    other = s.connection.channel()
    again, _, _ = other.basic_get(q)
    ready = s.ch.queue_declare(q, passive=True).method.message_count
    s.ch.basic_ack(method.delivery_tag)
    return expect("2 s after a basic.get without an ack, another channel's basic.get and the ready count",
                  (again is None, ready), (True, 0))


@probe
def dead_letter_reason_unknown(s):
    """R7: a dead letter says delivery_limit, not whether a nack or a lapse failed it last, and
    its time in whole seconds; its own x-delivery-count starts again at 0."""
    dlx = s.name("dlx")
    s.ch.exchange_declare(dlx, "direct", durable=True)
    dlq = s.quorum("dlq")
    s.ch.queue_bind(dlq, dlx, routing_key="k")
    q = s.quorum("dying", **{"x-delivery-limit": 0, "x-dead-letter-exchange": dlx,
                             "x-dead-letter-routing-key": "k",
                             "x-dead-letter-strategy": "at-least-once",
                             "x-overflow": "reject-publish"})
    s.publish(q, b"m")
    method, _, _ = s.ch.basic_get(q)
    s.ch.basic_nack(method.delivery_tag, requeue=True)
    deadline = time.monotonic() + 5
    got = []
    while not got and time.monotonic() < deadline:
        got = s.drain(dlq)
        time.sleep(0.01)
    if not got:
        print("no dead letter within 5 s")
        return False
    headers = got[0][2].headers
    death = headers["x-death"][0]
    reason = headers.get("x-first-death-reason")
    reason = reason.decode() if isinstance(reason, bytes) else reason
    stamp = death["time"]
    print("x-death: %s" % death)
    return expect("the dead letter's reason, whole-second time and x-delivery-count",
                  (reason, getattr(stamp, "microsecond", 0), int(headers.get("x-delivery-count", -1))),
                  ("delivery_limit", 0, 0))


@probe
def answers_name_no_reason(s):
    """R11: basic.ack has no reply; the server's only answer to an ack it cannot take is to
    close the channel (406), for a tag never delivered as for one acked already."""
    q = s.quorum("answers")
    s.publish(q, b"m")
    method, _, _ = s.ch.basic_get(q)
    answer = s.ch.basic_ack(method.delivery_tag)
    closed = []
    for tag in (method.delivery_tag, 999):
        ch = s.connection.channel()
        if tag == 999:
            ch.basic_ack(tag)
        else:  # acked already, on the channel it was delivered to
            ch = s.ch
            ch.basic_ack(tag)
        try:
            ch.queue_declare(q, passive=True)  # a round trip: the close arrives first
            closed.append(None)
        except pika.exceptions.ChannelClosedByBroker as e:
            closed.append(e.reply_code)
    s.ch = s.connection.channel()
    return expect("basic.ack's reply, then the channel's fate after a second ack and after "
                  "an ack of a tag never delivered", (answer, closed), (None, [406, 406]))


@probe
def header_filter_is_the_bindings(s):
    """R5: a binding with x-match all on a headers exchange routes only what carries its
    headers: the filter is the engine's."""
    ex = s.name("filter")
    s.ch.exchange_declare(ex, "headers", durable=True)
    q = s.quorum("filter.q")
    s.ch.queue_bind(q, ex, arguments={"x-match": "all", "color": b"red"})
    s.publish(None, b"red", exchange=ex, headers={"color": b"red"})
    s.publish(None, b"blue", exchange=ex, headers={"color": b"blue"})
    s.publish(None, b"none", exchange=ex)
    return expect("of red, blue and none the red-bound queue holds", bodies(s.drain(q)), ["red"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("name", choices=sorted(PROBES))
    args = parser.parse_args()
    server = Server(args.url)
    try:
        ok = PROBES[args.name](server)
    finally:
        server.connection.close()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
