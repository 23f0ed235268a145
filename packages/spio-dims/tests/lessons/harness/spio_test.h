// A small unit-test harness for the spio-dims C++ tests and lessons.
//
//     UTEST(Suite, Name) { EXPECT_TRUE(I(2) + I(4) == I(6)); EXPECT_EQ(x, 3); }
//     UTEST_MAIN()   // once per program: defines main()
//
// A failed EXPECT_* prints the file, line and expression and the test goes on. The program runs
// every registered test, or only those named as Suite.Name on the command line; `--list`
// prints the names. It exits 0 when all ran tests pass, 1 on a failure, 2 when no test matched.
// The standard headers the lessons use (std::iota, std::begin, std::is_same_v) come with it.
#pragma once

#include <cstdio>       // std::printf, std::fprintf
#include <iterator>     // std::begin, std::end (lessons)
#include <numeric>      // std::iota (lessons)
#include <ostream>      // operator<< detection for EXPECT_EQ
#include <sstream>      // std::ostringstream: printing EXPECT_EQ operands
#include <string>       // test names, messages
#include <type_traits>  // std::is_same_v (lessons), std::void_t
#include <utility>      // std::declval
#include <vector>       // the registry

namespace spio_test {

struct Case {
    const char* suite;
    const char* name;
    void (*body)();
};

inline std::vector<Case>& registry() {
    static std::vector<Case> cases;
    return cases;
}

// Failed checks in the running test.
inline int& failures() {
    static int count = 0;
    return count;
}

struct Registrar {
    Registrar(const char* suite, const char* name, void (*body)()) {
        registry().push_back({suite, name, body});
    }
};

template <typename T, typename = void>
struct Streamable : std::false_type {};

template <typename T>
struct Streamable<T,
                  std::void_t<decltype(std::declval<std::ostream&>() << std::declval<const T&>())>>
    : std::true_type {};

template <typename T, typename = void>
struct HasGet : std::false_type {};

template <typename T>
struct HasGet<T, std::void_t<decltype(std::declval<const T&>().get())>> : std::true_type {};

// An EXPECT_EQ operand as text: streamed if it can be, else its get() (dimensions).
template <typename T>
std::string show(const T& value) {
    std::ostringstream out;
    if constexpr (Streamable<T>::value) {
        out << value;
    } else if constexpr (HasGet<T>::value) {
        out << show(value.get());
    } else {
        out << "<value>";
    }
    return out.str();
}

inline void fail(const char* file, int line, const std::string& what) {
    ++failures();
    std::fprintf(stderr, "%s:%d: failed: %s\n", file, line, what.c_str());
}

inline int run(int argc, char** argv) {
    if (argc == 2 && std::string(argv[1]) == "--list") {
        for (const Case& c : registry()) std::printf("%s.%s\n", c.suite, c.name);
        return 0;
    }
    int ran = 0;
    int failed = 0;
    for (const Case& c : registry()) {
        const std::string name = std::string(c.suite) + "." + c.name;
        bool selected = argc < 2;
        for (int i = 1; i < argc; ++i) selected = selected || name == argv[i];
        if (!selected) continue;
        ++ran;
        failures() = 0;
        std::printf("[ RUN  ] %s\n", name.c_str());
        c.body();
        failed += failures() > 0;
        std::printf("[ %s ] %s\n", failures() > 0 ? "FAIL" : " OK ", name.c_str());
    }
    std::printf("%d test(s) ran, %d failed\n", ran, failed);
    return ran == 0 ? 2 : failed > 0 ? 1 : 0;
}

}  // namespace spio_test

#define UTEST(SUITE, NAME)                                                    \
    static void spio_test_##SUITE##_##NAME();                                 \
    static const ::spio_test::Registrar spio_test_registrar_##SUITE##_##NAME( \
        #SUITE, #NAME, &spio_test_##SUITE##_##NAME);                          \
    static void spio_test_##SUITE##_##NAME()

#define EXPECT_TRUE(...)                                                            \
    do {                                                                            \
        if (!(__VA_ARGS__))                                                         \
            ::spio_test::fail(__FILE__, __LINE__, "EXPECT_TRUE(" #__VA_ARGS__ ")"); \
    } while (0)

#define EXPECT_FALSE(...)                                                                         \
    do {                                                                                          \
        if (__VA_ARGS__) ::spio_test::fail(__FILE__, __LINE__, "EXPECT_FALSE(" #__VA_ARGS__ ")"); \
    } while (0)

#define EXPECT_EQ(A, B)                                                                        \
    do {                                                                                       \
        const auto& spio_test_a = (A);                                                         \
        const auto& spio_test_b = (B);                                                         \
        if (!(spio_test_a == spio_test_b))                                                     \
            ::spio_test::fail(__FILE__, __LINE__,                                              \
                              "EXPECT_EQ(" #A ", " #B "): " + ::spio_test::show(spio_test_a) + \
                                  " != " + ::spio_test::show(spio_test_b));                    \
    } while (0)

#define UTEST_MAIN() \
    int main(int argc, char** argv) { return ::spio_test::run(argc, argv); }
