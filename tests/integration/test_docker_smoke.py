"""The docker path works from day one: a container from the offline-built base image runs Python."""

import uuid


def test_base_image_runs_python(docker_client, base_image):
    label = f"smoke-{uuid.uuid4().hex[:8]}"
    output = docker_client.containers.run(
        base_image,
        ["python3", "-c", "print(1)"],
        network_mode="none",
        labels={"evolve.test": label},
        remove=True,
    )
    assert output.decode().strip() == "1"
    assert docker_client.containers.list(all=True, filters={"label": f"evolve.test={label}"}) == []
