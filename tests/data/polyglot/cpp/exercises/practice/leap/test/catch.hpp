// A small stand-in for Catch2 v2's single header (the real one is 650 KB and takes ~20 s to compile):
// the same TEST_CASE / REQUIRE / CHECK macros, command line (`-r xml -o FILE`) and XML report.
#pragma once
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace Catch {
struct TestCase { const char* name; const char* file; int line; void (*run)(); };
inline std::vector<TestCase>& registry() { static std::vector<TestCase> tests; return tests; }
inline std::vector<std::string>& failures() { static std::vector<std::string> failed; return failed; }
struct AutoReg {
    AutoReg(void (*run)(), const char* file, int line, const char* name, const char* = "") {
        registry().push_back({name, file, line, run});
    }
};
struct Abort {};
inline std::string escape(const std::string& text) {
    std::string out;
    for (char c : text) {
        if (c == '<') out += "&lt;"; else if (c == '>') out += "&gt;"; else if (c == '&') out += "&amp;";
        else if (c == '"') out += "&quot;"; else out += c;
    }
    return out;
}
inline int session(int argc, char** argv) {
    std::string reporter = "console", out;
    for (int i = 1; i + 1 < argc; ++i) {
        if (!std::strcmp(argv[i], "-r")) reporter = argv[++i];
        else if (!std::strcmp(argv[i], "-o")) out = argv[++i];
    }
    std::ofstream file;
    if (!out.empty()) file.open(out);
    std::ostream& report = out.empty() ? std::cout : file;
    int failed = 0;
    if (reporter == "xml") report << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Catch name=\"leap\">\n  <Group name=\"leap\">\n";
    for (const TestCase& test : registry()) {
        failures().clear();
        try { test.run(); } catch (const Abort&) {}
        failed += !failures().empty();
        if (reporter == "xml") {
            report << "    <TestCase name=\"" << escape(test.name) << "\" filename=\"" << test.file
                   << "\" line=\"" << test.line << "\">\n";
            for (const std::string& expr : failures())
                report << "      <Expression success=\"false\" type=\"REQUIRE\">\n        <Original>\n          "
                       << escape(expr) << "\n        </Original>\n      </Expression>\n";
            report << "      <OverallResult success=\"" << (failures().empty() ? "true" : "false") << "\"/>\n"
                   << "    </TestCase>\n";
        } else {
            for (const std::string& expr : failures()) report << test.name << " FAILED: " << expr << "\n";
        }
    }
    if (reporter == "xml") report << "  </Group>\n</Catch>\n";
    else report << "test cases: " << registry().size() << " | " << failed << " failed\n";
    return failed;
}
}  // namespace Catch

#define CATCH_CAT2(a, b) a##b
#define CATCH_CAT(a, b) CATCH_CAT2(a, b)
#define CATCH_TEST(fn, ...) \
    static void fn(); \
    static Catch::AutoReg CATCH_CAT(fn, _reg)(&fn, __FILE__, __LINE__, __VA_ARGS__); \
    static void fn()
#define TEST_CASE(...) CATCH_TEST(CATCH_CAT(catch_test_, __LINE__), __VA_ARGS__)
#define CHECK(expr) do { if (!(expr)) Catch::failures().push_back(#expr); } while (0)
#define REQUIRE(expr) do { if (!(expr)) { Catch::failures().push_back(#expr); throw Catch::Abort(); } } while (0)
#define CHECK_FALSE(expr) CHECK(!(expr))
#define REQUIRE_FALSE(expr) REQUIRE(!(expr))

#ifdef CATCH_CONFIG_MAIN
int main(int argc, char** argv) { return Catch::session(argc, argv); }
#endif
