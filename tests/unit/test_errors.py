"""The SDK's errors (``kafka_admin_kraft/errors.py``): the texts of an API error in context and of a
timeout naming the last error."""

from __future__ import annotations

from kafka_admin_kraft.errors import KafkaTimeoutError, NotControllerError, error_for_code


def test_error_texts() -> None:
    error = error_for_code(41, "not active").in_context("update_features", "node 2 (h:1)")
    assert isinstance(error, NotControllerError) and error.retriable
    assert str(error) == "[NOT_CONTROLLER] not active (update_features on node 2 (h:1))"
    timeout = KafkaTimeoutError("describe_cluster", 5, error)
    assert str(timeout) == (
        "describe_cluster timed out after 5 s; last error: "
        "[NOT_CONTROLLER] not active (update_features on node 2 (h:1))"
    )


def test_a_hint_ends_the_text_and_leaves_the_servers_message() -> None:
    error = error_for_code(136, "Controller 7 is not registered.").in_context("unregister_controller", "h:1")
    error.with_hint("list the registered controllers")
    assert error.message == "Controller 7 is not registered."
    assert str(error) == (
        "[CONTROLLER_ID_NOT_REGISTERED] Controller 7 is not registered. (unregister_controller on h:1): "
        "list the registered controllers"
    )


def test_a_timeout_is_rounded_to_the_millisecond() -> None:
    seconds = (0.253426, 1.5, 60.0, 1800.0)
    assert [str(KafkaTimeoutError("describe_cluster", s)) for s in seconds] == [
        f"describe_cluster timed out after {shown} s" for shown in ("0.253", "1.5", "60", "1800")]
