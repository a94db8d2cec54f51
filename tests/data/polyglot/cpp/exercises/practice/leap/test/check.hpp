// A minimal stand-in for Catch2 (the fixture stays small): CHECK records failures, main reports them.
#pragma once
#include <iostream>

namespace check {
inline int& failures() { static int count = 0; return count; }
}

#define CHECK(expr) \
    do { if (!(expr)) { ++check::failures(); std::cerr << "FAILED: " #expr "\n"; } } while (0)
