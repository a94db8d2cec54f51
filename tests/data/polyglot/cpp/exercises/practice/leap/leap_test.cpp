#include "leap.h"
#include "test/check.hpp"

void run_tests() {
    CHECK(!leap::is_leap_year(2015));
#if defined(EXERCISM_RUN_ALL_TESTS)
    CHECK(leap::is_leap_year(1996));
    CHECK(!leap::is_leap_year(2100));
    CHECK(leap::is_leap_year(2000));
#endif
}
