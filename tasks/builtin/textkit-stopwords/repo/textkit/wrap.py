"""Greedy word wrapping."""


def wrap(text: str, width: int) -> list[str]:
    """Split `text` into lines of at most `width` characters, breaking at spaces.

    Words longer than `width` are cut into pieces of `width` characters. Blank lines in `text`
    separate paragraphs and are kept as empty strings in the result.
    """
    if width < 1:
        raise ValueError("width must be at least 1")
    lines: list[str] = []
    for n, paragraph in enumerate(text.split("\n\n")):
        if n:
            lines.append("")
        current = ""
        for word in paragraph.split():
            while len(word) > width:
                if current:
                    lines.append(current)
                    current = ""
                lines.append(word[:width])
                word = word[width:]
            if not current:
                current = word
            elif len(current) + 1 + len(word) <= width:
                current += " " + word
            else:
                lines.append(current)
                current = word
        if current:
            lines.append(current)
    return lines
