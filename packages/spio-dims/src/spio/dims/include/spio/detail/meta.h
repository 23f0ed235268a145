// Compile-time building blocks: the handful of <type_traits>/<utility> tools spio-dims needs,
// written here because NVRTC has no C++ standard library.
//
// Each trait mirrors its std:: namesake (IsSame ~ std::is_same, is_same_v ~ std::is_same_v, ...);
// TypeList and IndexSeq carry packs of types and integers between metafunctions.
#pragma once

#include "spio/macros.h"  // SPIO_HOST_DEVICE

namespace spio::detail {

// IsSame<A, B>::value: whether A and B are one type (std::is_same).
template <typename A, typename B>
struct IsSame {
    static constexpr bool value = false;
};

template <typename A>
struct IsSame<A, A> {
    static constexpr bool value = true;
};

template <typename A, typename B>
inline constexpr bool is_same_v = IsSame<A, B>::value;

// is_same_type<A, B>: is_same_v again, for checks that must leave kernels' modules as they
// were. NVRTC emits each IsSame<A, B>::value that a translation unit instantiates as a global
// of the module, and a new global changes the compiled module (Spio's latency models are keyed
// on it); a variable template is never emitted.
template <typename A, typename B>
inline constexpr bool is_same_type = false;

template <typename A>
inline constexpr bool is_same_type<A, A> = true;

// Conditional<C, T, F>::type: T when C holds, else F (std::conditional).
template <bool C, typename T, typename F>
struct Conditional {
    using type = T;
};

template <typename T, typename F>
struct Conditional<false, T, F> {
    using type = F;
};

template <bool C, typename T, typename F>
using conditional_t = typename Conditional<C, T, F>::type;

// EnableIf<C, T>::type: T when C holds, else no member, for SFINAE (std::enable_if).
template <bool C, typename T = void>
struct EnableIf {};

template <typename T>
struct EnableIf<true, T> {
    using type = T;
};

template <bool C, typename T = void>
using enable_if_t = typename EnableIf<C, T>::type;

// RemoveConst<const T>::type is T (std::remove_const).
template <typename T>
struct RemoveConst {
    using type = T;
};

template <typename T>
struct RemoveConst<const T> {
    using type = T;
};

// declval<T>(): a T in unevaluated contexts such as decltype (std::declval); never defined.
template <typename T>
SPIO_HOST_DEVICE T&& declval() noexcept;

// void_t<Ts...> is void; a substitution failure inside it discards a specialization.
template <typename... Ts>
struct MakeVoid {
    using type = void;
};

template <typename... Ts>
using void_t = typename MakeVoid<Ts...>::type;

// always_false<T>: false, but only once T is known, for static_assert in a discarded branch.
template <typename T>
inline constexpr bool always_false = false;

// TypeList<Ts...>: a pack of types as a value of metaprograms.
template <typename... Ts>
struct TypeList {
    static constexpr int size = sizeof...(Ts);
};

// concat_t<TypeList<A...>, TypeList<B...>, ...> is TypeList<A..., B..., ...>.
template <typename... Lists>
struct Concat {
    using type = TypeList<>;
};

template <typename... As>
struct Concat<TypeList<As...>> {
    using type = TypeList<As...>;
};

template <typename... As, typename... Bs, typename... Rest>
struct Concat<TypeList<As...>, TypeList<Bs...>, Rest...> {
    using type = typename Concat<TypeList<As..., Bs...>, Rest...>::type;
};

template <typename... Lists>
using concat_t = typename Concat<Lists...>::type;

// type_at_t<N, Ts...>: the N-th type of the pack, counting from 0.
template <int N, typename... Ts>
struct TypeAt;

template <typename T, typename... Ts>
struct TypeAt<0, T, Ts...> {
    using type = T;
};

template <int N, typename T, typename... Ts>
struct TypeAt<N, T, Ts...> {
    using type = typename TypeAt<N - 1, Ts...>::type;
};

template <int N, typename... Ts>
using type_at_t = typename TypeAt<N, Ts...>::type;

// IndexSeq<0, 1, ..., N - 1> from make_index_seq<N> (std::make_integer_sequence), to expand
// a pack with its positions.
template <int... Is>
struct IndexSeq {};

template <int N, int... Is>
struct MakeIndexSeq : MakeIndexSeq<N - 1, N - 1, Is...> {};

template <int... Is>
struct MakeIndexSeq<0, Is...> {
    using type = IndexSeq<Is...>;
};

template <int N>
using make_index_seq = typename MakeIndexSeq<N>::type;

// gcd(a, b) of two positive integers; only ever evaluated by the compiler (fold strides).
SPIO_HOST_DEVICE constexpr int gcd(int a, int b) {
    while (b != 0) {
        const int r = a % b;
        a = b;
        b = r;
    }
    return a;
}

}  // namespace spio::detail
