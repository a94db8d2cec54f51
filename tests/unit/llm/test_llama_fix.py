"""The detokenizer shim against a stand-in of llama.cpp's `llama_token_to_piece` (the real tokenizer:
tests/e2e/test_embedded_serving.py)."""

import ctypes

import pytest

from evolve.llm.llama_fix import detokenize, token_piece

PIECES = {1: b"def", 2: b" " * 40, 3: b" " * 128, 4: b"\xe2\x9c\x93", 5: b" x"}


def piece(token, buffer, size, special):
    """As llama.cpp: the piece's length, or minus the size it needs when the buffer is too small."""
    text = PIECES[token]
    if len(text) > size:
        return -len(text)
    ctypes.memmove(buffer, text, len(text))
    return len(text)


@pytest.mark.parametrize("token", sorted(PIECES))
def test_every_piece_comes_back_whole_whatever_its_length(token):
    assert token_piece(piece, token) == PIECES[token]


def test_a_sequence_with_long_whitespace_tokens_round_trips():
    assert detokenize(piece, [1, 2, 4, 3, 1]) == b"def" + b" " * 40 + b"\xe2\x9c\x93" + b" " * 128 + b"def"


def test_the_leading_space_after_a_beginning_of_sentence_token_is_dropped_as_the_library_does():
    assert detokenize(piece, [5, 1], bos=5) == b"xdef"
    assert detokenize(piece, [5, 1], bos=None) == b" xdef"


def test_a_piece_function_that_keeps_asking_for_less_than_it_was_given_is_an_error():
    with pytest.raises(RuntimeError, match="returned -10"):
        token_piece(lambda token, buffer, size, special: -10, 7)
