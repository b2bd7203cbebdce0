"""The plain answers (``client/answers.py``): the same fields as the result models they become, so that
``model_validate(answer, from_attributes=True)`` gives the model and the tools print either alike, and
no pydantic behind them."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from pydantic import BaseModel

from kafka_admin_kraft import models
from kafka_admin_kraft.client import answers
from kafka_admin_kraft.protocol.primitives import ZERO_UUID, Uuid

PAIRS = [
    (answers.EndpointAnswer, models.Endpoint),
    (answers.NodeAnswer, models.Node),
    (answers.ReplicaAnswer, models.ReplicaState),
    (answers.QuorumAnswer, models.QuorumInfo),
    (answers.ClusterNodeAnswer, models.ClusterNode),
    (answers.ClusterAnswer, models.ClusterDescription),
    (answers.SupportedAnswer, models.SupportedVersionRange),
    (answers.FinalizedAnswer, models.FinalizedVersionRange),
    (answers.FeaturesAnswer, models.FeatureMetadata),
]


@pytest.mark.parametrize(("answer", "model"), PAIRS, ids=[answer.__name__ for answer, _ in PAIRS])
def test_an_answer_has_exactly_the_fields_of_its_model(answer: Any, model: type[BaseModel]) -> None:
    assert list(answer._fields) == list(model.model_fields)


def test_every_answer_is_paired_with_its_model() -> None:
    declared = {value for value in vars(answers).values()
                if isinstance(value, type) and issubclass(value, tuple)
                and value.__module__ == answers.__name__}
    assert declared == {answer for answer, _ in PAIRS}


def quorum() -> answers.QuorumAnswer:
    directory = Uuid.random()
    return answers.QuorumAnswer(
        leader_id=1, leader_epoch=4, high_watermark=10,
        voters=(answers.ReplicaAnswer(1, directory, 10, 5000, 5000),
                answers.ReplicaAnswer(2, ZERO_UUID, 8, None, None)),
        committed_voters=None, observers=(answers.ReplicaAnswer(7, ZERO_UUID, -1, None, None),),
        nodes={1: answers.NodeAnswer(1, (answers.EndpointAnswer("CONTROLLER", "::1", 9093),))},
        api_version=2,
    )


def test_a_quorum_answer_validates_into_the_quorum_info_of_the_same_values() -> None:
    answer = quorum()
    info = models.QuorumInfo.model_validate(answer, from_attributes=True)
    assert isinstance(info.voters[0], models.ReplicaState) and isinstance(info.nodes[1], models.Node)
    assert info.model_dump() == {
        "leader_id": 1, "leader_epoch": 4, "high_watermark": 10,
        "voters": tuple(v._asdict() for v in answer.voters),
        "committed_voters": None,
        "observers": tuple(o._asdict() for o in answer.observers),
        "nodes": {1: {"node_id": 1, "endpoints": ({"listener": "CONTROLLER", "host": "::1", "port": 9093},)}},
        "api_version": 2,
    }


def test_an_endpoint_prints_as_the_model_prints() -> None:
    for host in ("ctl1", "10.0.0.1", "::1"):
        plain = answers.EndpointAnswer("CONTROLLER", host, 9093)
        assert str(plain) == str(models.Endpoint(listener="CONTROLLER", host=host, port=9093))
    assert str(answers.EndpointAnswer("CONTROLLER", "::1", 9093)) == "CONTROLLER://[::1]:9093"


def test_an_upside_down_feature_range_is_refused_by_the_model_it_becomes() -> None:
    answer = answers.FeaturesAnswer({}, None, {"kraft.version": answers.SupportedAnswer(2, 1)})
    with pytest.raises(ValueError, match="invalid supported range 2..1"):
        models.FeatureMetadata.model_validate(answer, from_attributes=True)


def test_the_answers_do_not_import_pydantic() -> None:
    code = "import sys, kafka_admin_kraft.client.answers; print('pydantic' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_a_servers_endpoint_is_taken_as_reported_not_checked_as_a_callers() -> None:
    """Validation from an answer does not run ``Endpoint.__init__``, whose checks are for endpoints a
    caller builds: a leader's answer is not refused for a listener name Kafka would not accept."""
    answer = answers.NodeAnswer(1, (answers.EndpointAnswer("controller", "ctl 1", 0),))
    node = models.Node.model_validate(answer, from_attributes=True)
    endpoint = node.endpoints[0]
    assert (endpoint.listener, endpoint.host, endpoint.port) == ("controller", "ctl 1", 0)
    with pytest.raises(ValueError, match="listener"):
        models.Endpoint(listener="controller", host="ctl1", port=9093)
