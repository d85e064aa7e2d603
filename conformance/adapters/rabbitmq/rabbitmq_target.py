#!/usr/bin/python3
"""RabbitMQ quorum queues as a conformance target: the target protocol (docs/target-protocol.md)
on stdin and stdout, the engine reached through Debian's python3-pika.

    rabbitmq_target.py --url amqp://guest:guest@127.0.0.1:PORT/%2F [--prefix P]

The mapping (CONFORMANCE.md "RabbitMQ"; what is the adapter's is said so):
- A topic is a `headers` exchange `P.<topic>` (durable) and a direct exchange `P.<topic>.dlx`
  for its dead letters. create_topic asks the server whether the exchange exists (a passive
  declare) before it declares it; delete_topic deletes it with if-unused, so the server refuses
  while a subscription's queue is bound (topic_in_use).
- A publish goes to the exchange with publisher confirms (it returns once the server confirmed
  it); the message carries its model offset in the header `aloc-offset`: the adapter counts a
  topic's publishes (offsets are the adapter's mapping, as Redis's stream ids are).
- A subscription is a quorum queue `P.<topic>.<name>` bound to the exchange (its header filter
  is the binding's arguments, x-match all: the filter is the engine's), with
  `x-delivery-limit` = max deliveries - 1 (none for 0), `x-dead-letter-exchange` the topic's
  dlx, `x-dead-letter-strategy: at-least-once` and `x-overflow: reject-publish` (which
  at-least-once requires). Its dead letters go to the quorum queue `P.<topic>.<name>.dlq`.
- A member is a channel of its worker's connection; poll is basic.get (manual ack) up to max
  times on it; a message's attempt is its `x-delivery-count` plus one.
- ack is basic.ack, nack basic.nack with requeue, term basic.reject without requeue (the server
  dead-letters it, reason `rejected`), on the member's channel with the delivery's tag.
- Deadlines are the adapter's: RabbitMQ keeps none per message (its consumer timeout closes a
  whole channel, after minutes). The adapter keeps the model's clock (unit_ms 0), stamps each
  delivery with now + the ack timeout, refuses an answer from a member that does not hold the
  message or holds it past its deadline (an ack of a tag the channel does not hold would close
  the channel), moves the deadline on extend, and at expire gives back (basic.nack with
  requeue) what passed its deadline. AMQP answers no ack, nack or reject: the answers are the
  adapter's (true when it sent the call).
- dead_letters reads the subscription's dead-letter queue (basic.get with auto ack, waiting at
  most 2 s for the deaths the adapter's calls caused to arrive: dead-lettering is asynchronous
  in the server) and answers every dead letter read so far: payload and headers as the server
  kept them, the reason from `x-first-death-reason` (rejected: terminated), attempts the
  `x-delivery-count` its last delivery carried plus one (the dead letter's own is reset to 0).
"""
import argparse
import json
import os
import sys
import time

import pika
import pika.exceptions

OFFSET = "aloc-offset"


def s2b(s):  # a protocol string: bytes as U+0000..U+00FF
    return s.encode("latin-1")


def b2s(b):
    return b.decode("latin-1")


class Refused(Exception):
    """The call was refused and changed nothing: the model's ErrorCode by name."""

    def __init__(self, code):
        super().__init__(code)
        self.code = code


class Sub:
    def __init__(self, op):
        self.ack_timeout = op["ack_timeout"]
        self.max_deliveries = op["max_deliveries"]
        self.filter = op.get("filter", {})
        self.start = op["start"]
        self.held = {}  # offset -> [member key, channel, delivery tag, deadline, attempt]
        self.dead = []  # dead letters read so far
        self.deaths_caused = 0  # calls of the adapter's that make the server dead-letter
        self.last_attempt = {}  # offset -> the attempt of its latest delivery


class Adapter:
    def __init__(self, url, prefix):
        self.params = pika.URLParameters(url)
        self.prefix = prefix
        self.connections = {}  # worker -> BlockingConnection
        self.channels = {}  # (worker, member) -> channel
        self.control_channel = None
        self.now = 0
        self.offsets = {}  # topic -> next offset (the adapter's count of confirmed publishes)
        self.subs = {}  # (topic, name) -> Sub
        self.topics_made = set()  # exchanges this adapter declared (removed at the end)

    # --- names and channels -------------------------------------------------------------
    def exchange(self, topic):
        return self.prefix + "." + s2b(topic).hex()

    def queue(self, topic, name):
        return self.exchange(topic) + "." + s2b(name).hex()

    def connection(self, worker):
        c = self.connections.get(worker)
        if c is None or c.is_closed:
            c = self.connections[worker] = pika.BlockingConnection(self.params)
        return c

    def control(self):
        """A channel of worker 0's connection for declarations; made again after the server
        closed it (a refused passive declare closes its channel)."""
        if self.control_channel is None or self.control_channel.is_closed:
            self.control_channel = self.connection(0).channel()
            self.control_channel.confirm_delivery()
        return self.control_channel

    def member_channel(self, worker, member):
        key = (worker, member)
        ch = self.channels.get(key)
        if ch is None or ch.is_closed:
            ch = self.channels[key] = self.connection(worker).channel()
        return ch

    def exists(self, kind, name):
        try:
            if kind == "exchange":
                self.control().exchange_declare(name, passive=True)
            else:
                self.control().queue_declare(name, passive=True)
            return True
        except pika.exceptions.ChannelClosedByBroker as e:
            if e.reply_code == 404:
                return False
            raise

    def topic_or_refuse(self, topic):
        if not self.exists("exchange", self.exchange(topic)):
            raise Refused("unknown_topic")

    def sub_or_refuse(self, topic, name):
        self.topic_or_refuse(topic)
        sub = self.subs.get((topic, name))
        if sub is None or not self.exists("queue", self.queue(topic, name)):
            raise Refused("unknown_subscription")
        return sub

    # --- ops ----------------------------------------------------------------------------
    def create_topic(self, op):
        topic = op["topic"]
        if topic == "":
            raise Refused("invalid_argument")
        name = self.exchange(topic)
        if self.exists("exchange", name):
            raise Refused("duplicate_topic")
        self.control().exchange_declare(name, "headers", durable=True)
        self.control().exchange_declare(name + ".dlx", "direct", durable=True)
        self.topics_made.add(name)
        self.offsets[topic] = 0
        return {"done": True}

    def delete_topic(self, op):
        topic = op["topic"]
        self.topic_or_refuse(topic)
        name = self.exchange(topic)
        try:
            self.control().exchange_delete(name, if_unused=True)
        except pika.exceptions.ChannelClosedByBroker as e:
            if e.reply_code == 406:  # the server: in use (a queue is bound)
                raise Refused("topic_in_use")
            raise
        self.control().exchange_delete(name + ".dlx")
        self.topics_made.discard(name)
        self.offsets.pop(topic, None)
        return {"done": True}

    def publish(self, op):
        topic = op["topic"]
        self.topic_or_refuse(topic)
        offset = self.offsets.get(topic, 0)
        headers = {k: s2b(v) for k, v in op.get("headers", {}).items()}
        headers[OFFSET] = offset
        self.control().basic_publish(self.exchange(topic), "", s2b(op["payload"]),
                                     pika.BasicProperties(headers=headers, delivery_mode=2))
        self.offsets[topic] = offset + 1
        return {"offset": offset}

    def subscribe_pull(self, op):
        topic, name = op["topic"], op["name"]
        if name == "" or op["ack_timeout"] <= 0 or op["max_deliveries"] < 0:
            raise Refused("invalid_argument")
        self.topic_or_refuse(topic)
        q = self.queue(topic, name)
        existing = self.subs.get((topic, name))
        if existing is not None and self.exists("queue", q):
            same = (existing.ack_timeout, existing.max_deliveries, existing.filter, existing.start) == (
                op["ack_timeout"], op["max_deliveries"], op.get("filter", {}), op["start"])
            if same:
                return {"done": True}
            raise Refused("options_mismatch")
        args = {"x-queue-type": "quorum",
                "x-dead-letter-exchange": self.exchange(topic) + ".dlx",
                "x-dead-letter-routing-key": q,
                "x-dead-letter-strategy": "at-least-once",
                "x-overflow": "reject-publish"}
        if op["max_deliveries"] > 0:
            args["x-delivery-limit"] = op["max_deliveries"] - 1
        ch = self.control()
        ch.queue_declare(q + ".dlq", durable=True, arguments={"x-queue-type": "quorum"})
        ch.queue_bind(q + ".dlq", self.exchange(topic) + ".dlx", routing_key=q)
        ch.queue_declare(q, durable=True, arguments=args)
        binding = {"x-match": "all"}
        for k, v in op.get("filter", {}).items():
            binding[k] = s2b(v)
        ch.queue_bind(q, self.exchange(topic), arguments=binding)
        self.subs[(topic, name)] = Sub(op)
        return {"done": True}

    def unsubscribe(self, op):
        topic, name = op["topic"], op["name"]
        self.topic_or_refuse(topic)
        q = self.queue(topic, name)
        if (topic, name) not in self.subs or not self.exists("queue", q):
            return {"bool": False}
        self.control().queue_delete(q)
        self.control().queue_delete(q + ".dlq")
        del self.subs[(topic, name)]
        return {"bool": True}

    def poll(self, op, worker):
        if op["max"] == 0 or op["member"] == "":
            raise Refused("invalid_argument")
        topic, name, member = op["topic"], op["sub"], op["member"]
        sub = self.sub_or_refuse(topic, name)
        ch = self.member_channel(worker, member)
        out = []
        while len(out) < op["max"]:
            method, props, body = ch.basic_get(self.queue(topic, name), auto_ack=False)
            if method is None:
                break
            headers = props.headers or {}
            offset = int(headers[OFFSET])
            attempt = int(headers.get("x-delivery-count", 0)) + 1
            deadline = self.now + sub.ack_timeout
            sub.held[offset] = [(worker, member), ch, method.delivery_tag, deadline, attempt]
            sub.last_attempt[offset] = attempt
            out.append({"offset": offset, "payload": b2s(body), "attempt": attempt,
                        "deadline": deadline})
        return {"received": out}

    def holding(self, op, worker):
        """The held entry op may answer (its member's, before its deadline), or None."""
        sub = self.sub_or_refuse(op["topic"], op["sub"])
        held = sub.held.get(op["offset"])
        if held is None or held[0] != (worker, op["member"]) or self.now >= held[3]:
            return sub, None
        return sub, held

    def settle(self, op, worker):
        """ack, nack or term, by the member that holds the message, before its deadline."""
        sub, held = self.holding(op, worker)
        if held is None:
            return {"bool": False}
        channel, tag, attempt = held[1], held[2], held[4]
        if op["op"] == "ack":
            channel.basic_ack(tag)
        elif op["op"] == "nack":
            channel.basic_nack(tag, requeue=True)
            if sub.max_deliveries > 0 and attempt >= sub.max_deliveries:
                sub.deaths_caused += 1  # the server dead-letters it at its delivery limit
        else:
            channel.basic_reject(tag, requeue=False)
            sub.deaths_caused += 1
        del sub.held[op["offset"]]
        return {"bool": True}

    def extend(self, op, worker):
        if op["extension"] <= 0:
            raise Refused("invalid_argument")
        sub, held = self.holding(op, worker)
        if held is None:
            return {"bool": False}
        held[3] = self.now + op["extension"]
        return {"bool": True}

    def advance(self, op):
        self.now += op["ms"]
        return {"done": True}

    def expire(self):
        out = []
        for (topic, name), sub in self.subs.items():
            late = sorted((h[3], offset) for offset, h in sub.held.items() if h[3] <= self.now)
            for _, offset in late:
                held = sub.held.pop(offset)
                held[1].basic_nack(held[2], requeue=True)
                dead = sub.max_deliveries > 0 and held[4] >= sub.max_deliveries
                if dead:
                    sub.deaths_caused += 1
                out.append({"topic": topic, "sub": name, "offset": offset, "dead_lettered": dead})
        return {"expired": out}

    def dead_letters(self, op):
        topic, name = op["topic"], op["name"]
        sub = self.sub_or_refuse(topic, name)
        dlq = self.queue(topic, name) + ".dlq"
        ch = self.control()
        deadline = time.monotonic() + 2
        while True:
            method, props, body = ch.basic_get(dlq, auto_ack=True)
            if method is None:
                if len(sub.dead) >= sub.deaths_caused or time.monotonic() >= deadline:
                    break
                time.sleep(0.005)
                continue
            headers = dict(props.headers or {})
            offset = int(headers.pop(OFFSET))
            reason = headers.get("x-first-death-reason", "")
            if isinstance(reason, bytes):
                reason = reason.decode()
            kept = {k: (b2s(v) if isinstance(v, bytes) else str(v)) for k, v in headers.items()
                    if not k.startswith("x-")}
            sub.dead.append({"topic": topic, "sub": name, "offset": offset, "payload": b2s(body),
                             "attempts": sub.last_attempt.get(offset, 0),
                             "reason": "terminated" if reason == "rejected" else reason,
                             "died_at": 0, "headers": kept})
        return {"dead_letters": sub.dead}

    def step(self, req):
        op, worker = req["op"], req["worker"]
        if op == "create_topic":
            return self.create_topic(req)
        if op == "delete_topic":
            return self.delete_topic(req)
        if op == "publish":
            return self.publish(req)
        if op == "subscribe_pull":
            return self.subscribe_pull(req)
        if op == "unsubscribe":
            return self.unsubscribe(req)
        if op == "poll":
            return self.poll(req, worker)
        if op in ("ack", "nack", "term"):
            return self.settle(req, worker)
        if op == "extend":
            return self.extend(req, worker)
        if op == "advance":
            return self.advance(req)
        if op == "expire":
            return self.expire()
        if op == "dead_letters":
            return self.dead_letters(req)
        raise ValueError("not served: " + op)

    def close(self):
        """Removes every queue and exchange this adapter made, then its connections."""
        try:
            ch = self.control()
            for (topic, name) in list(self.subs):
                ch.queue_delete(self.queue(topic, name))
                ch.queue_delete(self.queue(topic, name) + ".dlq")
            for name in self.topics_made:
                ch.exchange_delete(name)
                ch.exchange_delete(name + ".dlx")
        except pika.exceptions.AMQPError as e:
            print("rabbitmq_target: cleanup: %r" % e, file=sys.stderr)
        for c in self.connections.values():
            if c.is_open:
                c.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--prefix", default="aloc%d" % os.getpid())
    args = parser.parse_args()
    adapter = Adapter(args.url, args.prefix)
    out = sys.stdout
    out.write(json.dumps({"hello": "at-least-once-target", "version": 1, "name": "rabbitmq",
                          "serves": [], "workers": True, "unit_ms": 0}) + "\n")
    out.flush()
    try:
        for line in sys.stdin:
            req = json.loads(line)
            reply = {"id": req["id"]}
            try:
                reply.update(adapter.step(req))
            except Refused as e:
                reply["error"] = e.code
            except Exception as e:  # the engine or the adapter failed: the kit stops
                reply["fail"] = "%s: %s" % (type(e).__name__, e)
            out.write(json.dumps(reply) + "\n")
            out.flush()
    finally:
        adapter.close()


if __name__ == "__main__":
    main()
