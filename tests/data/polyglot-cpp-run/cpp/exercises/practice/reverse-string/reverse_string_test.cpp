#include "reverse_string.h"
#include "test/catch.hpp"

TEST_CASE("an_empty_string") { REQUIRE(reverse_string::reverse_string("").empty()); }

#if defined(EXERCISM_RUN_ALL_TESTS)
TEST_CASE("a_word") { REQUIRE(reverse_string::reverse_string("robot") == "tobor"); }

TEST_CASE("a_palindrome") { REQUIRE(reverse_string::reverse_string("racecar") == "racecar"); }
#endif
