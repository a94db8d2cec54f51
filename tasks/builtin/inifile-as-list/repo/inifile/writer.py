"""Write {section: {key: value}} as INI text."""


def dumps(data: dict[str, dict[str, str]]) -> str:
    """INI text that `parse` reads back to the same data; DEFAULT comes first when present."""
    names = sorted(data, key=lambda name: (name != "DEFAULT", list(data).index(name)))
    chunks = []
    for name in names:
        lines = [f"[{name}]"]
        for key, value in data[name].items():
            first, *rest = str(value).split("\n")
            lines.append(f"{key} = {first}")
            lines.extend(f"    {line}" for line in rest)
        chunks.append("\n".join(lines))
    return "\n\n".join(chunks) + "\n"
