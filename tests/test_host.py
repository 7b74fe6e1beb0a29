from oltplab.host import host_facts


def test_host_facts() -> None:
    facts = host_facts()
    assert set(facts) >= {
        "hostname",
        "os",
        "kernel",
        "cpu_model",
        "cpu_cores",
        "memory_bytes",
        "python_version",
    }
    assert isinstance(facts["hostname"], str)
    assert facts["cpu_cores"] is None or facts["cpu_cores"] >= 1
    assert facts["memory_bytes"] is None or facts["memory_bytes"] > 0
