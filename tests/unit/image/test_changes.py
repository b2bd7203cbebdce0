"""A run of PartitionChangeRecords summed per partition leaves every partition as applying the records
one by one does (``PartitionRegistration.merge`` in turn)."""

from __future__ import annotations

import copy
import random

from kafka_admin_kraft.image.changes import Tails, decode_partition_change, sum_changes
from kafka_admin_kraft.image.model import MIGRATING_DIRECTORY, Partition
from kafka_admin_kraft.image.replay import merge_fields
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.records import encode_metadata_record
from unit.image.image_testlib import partition_change

TOPICS = [Uuid.from_ints(1, 1), Uuid.from_ints(2, 2)]
DIRECTORIES = [Uuid.from_ints(9, n) for n in range(4)]
MIGRATING = Uuid.from_string(MIGRATING_DIRECTORY)


def _start(rng: random.Random) -> Partition:
    replicas = tuple(rng.sample(range(1, 6), 3))
    directories = (MIGRATING_DIRECTORY,) * 3 if rng.random() < 0.5 else tuple(
        str(d) for d in rng.sample(DIRECTORIES, 3))
    return Partition(replicas, directories, replicas, (), (), (), (), replicas[0], 0, 5, 7)


def _change(rng: random.Random) -> bytes:
    """A change of one of four partitions, drawn from few values so that many repeat."""
    version = rng.choice((0, 1, 2))

    def maybe(values: list[list[int]]) -> list[int] | None:
        return rng.choice(values) if rng.random() < 0.3 else None

    directories = None
    if version >= 1 and rng.random() < 0.2:
        directories = rng.choice([[MIGRATING] * rng.choice((2, 3)), rng.sample(DIRECTORIES, 3), []])
    record = partition_change(
        rng.randrange(2), topic=rng.choice(TOPICS), isr=maybe([[1, 2], [1, 2, 3], [2]]),
        leader=rng.choice((-2, -2, -1, 1, 2)), replicas=maybe([[1, 2, 3], [2, 3], [1, 2, 3, 4]]),
        removing=maybe([[4], []]), adding=maybe([[3], []]),
        elr=maybe([[3], []]) if version == 2 else None,
        last_known_elr=maybe([[1], []]) if version == 2 else None,
        recovery=rng.choice((-1, -1, 0, 1)), directories=directories, version=version)
    return encode_metadata_record(record)


def test_a_summed_run_leaves_each_partition_as_every_record_in_turn() -> None:
    for seed in range(200):
        rng = random.Random(seed)
        start = {(topic.bytes, p): _start(rng) for topic in TOPICS for p in range(2)}
        values = [_change(rng) for _ in range(rng.randrange(1, 60))]
        one_by_one = copy.deepcopy(start)
        for value in values:
            partition_id, topic, fields = decode_partition_change(value, 3, value[2])
            merge_fields(one_by_one[(topic, partition_id)], fields)
        sums = sum_changes(values, Tails(100))
        assert sums is not None
        summed = copy.deepcopy(start)
        for key, total in sums.items():
            target = summed[(key[4:], int.from_bytes(key[:4], "big"))]
            merge_fields(target, total.fields, total.leader_changes, total.changes)
        assert summed == one_by_one, seed
        assert sum(total.changes for total in sums.values()) == len(values)


def test_a_run_holding_a_value_that_does_not_decode_sums_to_nothing() -> None:
    good = encode_metadata_record(partition_change(0, isr=[1]))
    assert sum_changes([good, good[:-1]], Tails(100)) is None
    assert sum_changes([good, good + b"\x00"], Tails(100)) is None
    assert sum_changes([good, good[:10]], Tails(100)) is None
    summed = sum_changes([good, good], Tails(100))
    assert summed is not None and [total.changes for total in summed.values()] == [2]


def test_a_tag_given_twice_counts_with_its_last_value() -> None:
    record = partition_change(0, isr=[1, 2], leader=3)
    twice = bytearray(record.body[:20])
    twice += b"\x04" + b"\x00\x09\x03\x00\x00\x00\x01\x00\x00\x00\x02" + b"\x01\x04\x00\x00\x00\x03"
    twice += b"\x00\x01\x00" + b"\x01\x04\xff\xff\xff\xfe"  # then a null ISR and leader -2: no change
    value = encode_metadata_record(type(record)(5, 2, bytes(twice)))
    start = _start(random.Random(1))
    one, summed = copy.deepcopy(start), copy.deepcopy(start)
    merge_fields(one, decode_partition_change(value, 3, 2)[2])
    sums = sum_changes([value], Tails(100))
    assert sums is not None
    (total,) = sums.values()
    merge_fields(summed, total.fields, total.leader_changes, total.changes)
    assert summed == one and one.isr == start.isr and one.leader_epoch == start.leader_epoch
