import pytest
from agent.model import Model, ModelError


def test_a_chat_request_goes_over_the_unix_socket(gateway):
    gateway.replies.append((200, "hi"))
    model = Model(socket_path=gateway.server_address)
    assert model.query([{"role": "user", "content": "hello"}], stop=["x"])["content"] == "hi"
    path, body = gateway.requests[0]
    assert path == "/v1/chat/completions" and body["messages"] == [{"role": "user", "content": "hello"}]
    assert body["stop"] == ["x"] and model.tokens == 7


def test_a_server_error_is_retried_once_a_client_error_is_not(gateway):
    gateway.replies += [(503, ""), (200, "ok")]
    assert Model(socket_path=gateway.server_address).query([])["content"] == "ok"
    gateway.replies += [(400, ""), (200, "never")]
    with pytest.raises(ModelError, match="HTTP 400"):
        Model(socket_path=gateway.server_address).query([])
    assert len(gateway.requests) == 3


def test_an_unreachable_gateway_is_a_model_error(tmp_path, monkeypatch):
    monkeypatch.setattr("agent.model.time.sleep", lambda s: None)
    with pytest.raises(ModelError, match="connection failed"):
        Model(socket_path=str(tmp_path / "nothing.sock")).query([])
