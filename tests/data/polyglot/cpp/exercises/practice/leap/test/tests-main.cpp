#include "check.hpp"

void run_tests();

int main() {
    run_tests();
    if (check::failures()) { std::cerr << check::failures() << " check(s) failed\n"; return 1; }
    std::cout << "all checks passed\n";
    return 0;
}
