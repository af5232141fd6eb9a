// Fused elementwise expressions (infini_cupy.fuse): one kernel computes a whole expression of
// the functors of elementwise.cu, with no intermediate array. An expression is a type:
//
//   ic::In<K>                        array input K; its storage type is the kernel's pointer type
//   ic::Scalar<J, T>                 scalar slot J: a T passed by value (ic::Scalars)
//   ic::Expr<Op, Tout, Tin, Arg...>  exactly what ew_contig<Op, Tout, Tin> computes, on its
//                                    arguments' values cast to Tin as the cast kernel casts
//                                    (so every node rounds where the unfused call rounds)
//   ic::Where<T, Cond, A, B>         A where Cond, else B; both cast to T
//   ic::Fused<E...>                  one expression per output
//
// and a fused kernel is a name expression of the two templates below, e.g.
//   ew_fused_contig<ic::Fused<ic::Expr<ic::OpDivide, float, float,
//       ic::Expr<ic::OpSubtract, float, float, ic::In<0>, ic::In<1>>, ic::In<2>>>,
//       float, float, float, float>
// (T...: the operands' storage types, outputs first, then the array inputs). Promotion,
// broadcasting and layouts are decided on the host; the templates take any number of
// operands as a parameter pack, so g++ (the emulator) and NVRTC compile the same text.
//
//   ew_fused_contig<F, T...>                every operand C-contiguous with the output's shape:
//                                           grid-stride loop, 16-byte accesses when `vectorized`
//   ew_fused_strided<F, NDIM, Index, T...>  any byte strides (0: broadcast), NDIM dims; for
//                                           NDIM 2 the 16-byte path of ew_strided (an input
//                                           broadcast along the inner dim: one load per pack)
#pragma once

namespace ic {

// ---------------------------------------------------------------- pack utilities (no <utility>)
template <int... I> struct seq {};
template <int N, int... I> struct make_seq : make_seq<N - 1, N - 1, I...> {};
template <int... I> struct make_seq<0, I...> { typedef seq<I...> type; };

template <int K, typename... T> struct nth;
template <typename H, typename... R> struct nth<0, H, R...> { typedef H type; };
template <int K, typename H, typename... R> struct nth<K, H, R...> { typedef typename nth<K - 1, R...>::type type; };

template <int... V> struct max_of { static constexpr int value = 0; };
template <int A, int... R> struct max_of<A, R...> {
    static constexpr int value = A > max_of<R...>::value ? A : max_of<R...>::value;
};

// A row of values of types T... (one element of every input; pointers; packs).
template <typename... T> struct Row;
template <> struct Row<> {
    __device__ __forceinline__ Row() {}
};
template <typename H, typename... R> struct Row<H, R...> {
    H head;
    Row<R...> tail;
    __device__ __forceinline__ Row() {}
    __device__ __forceinline__ Row(H h, R... r) : head(h), tail(r...) {}
};
template <int K> struct RowAt {
    template <typename Rw> static __device__ __forceinline__ auto &of(Rw &r) { return RowAt<K - 1>::of(r.tail); }
};
template <> struct RowAt<0> {
    template <typename Rw> static __device__ __forceinline__ auto &of(Rw &r) { return r.head; }
};
template <int K, typename Rw> __device__ __forceinline__ auto &row_at(Rw &r) { return RowAt<K>::of(r); }

// ---------------------------------------------------------------- expressions
template <int K> struct In {};
template <int J, typename T> struct Scalar {};
template <typename Op, typename Tout, typename Tin, typename... Arg> struct Expr {};
template <typename T, typename Cond, typename A, typename B> struct Where {};

// Scalar slots used by an expression: 1 + the highest J.
template <typename E> struct slots_of { static constexpr int value = 0; };
template <int J, typename T> struct slots_of<Scalar<J, T>> { static constexpr int value = J + 1; };
template <typename Op, typename Tout, typename Tin, typename... Arg> struct slots_of<Expr<Op, Tout, Tin, Arg...>> {
    static constexpr int value = max_of<slots_of<Arg>::value...>::value;
};
template <typename T, typename C, typename A, typename B> struct slots_of<Where<T, C, A, B>> {
    static constexpr int value = max_of<slots_of<C>::value, slots_of<A>::value, slots_of<B>::value>::value;
};

template <typename... E> struct Fused {
    static constexpr int nout = sizeof...(E);
    static constexpr int nscalars = max_of<1, slots_of<E>::value...>::value;  // no zero-length array
};

// Scalars by value, 16 bytes a slot (the widest scalar: complex128), in the slot's type.
template <int N> struct Scalars {
    alignas(16) unsigned char bytes[N][16];
};

// The cast kernel's conversion (ew_contig<OpPositive, To, From>); nothing for the same type.
template <typename To, typename From> struct CastTo {
    static __device__ __forceinline__ To of(From x) {
        return convert<To>(convert<typename compute_for<OpPositive, From>::type>(x));
    }
};
template <typename T> struct CastTo<T, T> {
    static __device__ __forceinline__ T of(T x) { return x; }
};
template <typename To, typename From> __device__ __forceinline__ To cast_to(From x) { return CastTo<To, From>::of(x); }

// Eval<E>::of(values, scalars): the value of E, of its storage type.
template <typename E> struct Eval;
template <int K> struct Eval<In<K>> {
    template <typename V, typename S> static __device__ __forceinline__ auto of(const V &v, const S &) { return row_at<K>(v); }
};
template <int J, typename T> struct Eval<Scalar<J, T>> {
    template <typename V, typename S> static __device__ __forceinline__ T of(const V &, const S &s) {
        return *reinterpret_cast<const T *>(s.bytes[J]);
    }
};
template <typename Op, typename Tout, typename Tin, typename... Arg> struct Eval<Expr<Op, Tout, Tin, Arg...>> {
    static_assert(Op::arity == sizeof...(Arg), "a node has as many arguments as its functor");
    template <typename V, typename S> static __device__ __forceinline__ Tout of(const V &v, const S &s) {
        typedef typename compute_for<Op, Tin>::type C;
        return convert<Tout>(Op()(convert<C>(cast_to<Tin>(Eval<Arg>::of(v, s)))...));
    }
};
template <typename T, typename C, typename A, typename B> struct Eval<Where<T, C, A, B>> {
    template <typename V, typename S> static __device__ __forceinline__ T of(const V &v, const S &s) {
        return cast_to<bool>(Eval<C>::of(v, s)) ? cast_to<T>(Eval<A>::of(v, s)) : cast_to<T>(Eval<B>::of(v, s));
    }
};

template <typename... T> struct widest;
template <> struct widest<> { static constexpr int value = 1; };
template <typename H, typename... R> struct widest<H, R...> {
    static constexpr int value = (int)sizeof(H) > widest<R...>::value ? (int)sizeof(H) : widest<R...>::value;
};

// ---------------------------------------------------------------- the kernels' bodies
template <typename F, typename Outs, typename Ins, typename... T> struct FusedBody;
template <typename... E, int... O, int... I, typename... T>
struct FusedBody<Fused<E...>, seq<O...>, seq<I...>, T...> {
    static constexpr int NOUT = sizeof...(O);
    static constexpr int N = sizeof...(T);
    static constexpr int VEC = widest<T...>::value >= 16 ? 1 : 16 / widest<T...>::value;
    template <int K> using Op_t = typename nth<K, T...>::type;  // operand K's storage type
    typedef Row<Op_t<NOUT + I>...> Values;
    typedef Scalars<Fused<E...>::nscalars> S;

    template <int K> static __device__ __forceinline__ Op_t<K> output(const Values &v, const S &s) {
        return cast_to<Op_t<K>>(Eval<typename nth<K, E...>::type>::of(v, s));
    }

    static __device__ __forceinline__ void contig(const S &s, long long n, int vectorized, T *...p) {
        const Row<T *...> ptr{p...};
        const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
        const long long step = (long long)gridDim.x * blockDim.x;
        long long head = 0;
        if constexpr (VEC > 1) {
            if (vectorized) {
                const long long nvec = n / VEC;
                for (long long i = tid; i < nvec; i += step) {
                    const Row<Pack<Op_t<NOUT + I>, VEC>...> in{
                        ld(reinterpret_cast<const Pack<Op_t<NOUT + I>, VEC> *>(row_at<NOUT + I>(ptr)) + i)...};
                    Row<Pack<Op_t<O>, VEC>...> r;
#pragma unroll
                    for (int j = 0; j < VEC; ++j) {
                        const Values v{row_at<I>(in).v[j]...};
                        ((row_at<O>(r).v[j] = output<O>(v, s)), ...);
                    }
                    (st(reinterpret_cast<Pack<Op_t<O>, VEC> *>(row_at<O>(ptr)) + i, row_at<O>(r)), ...);
                }
                head = nvec * VEC;
            }
        }
        for (long long i = head + tid; i < n; i += step) {
            const Values v{ld(row_at<NOUT + I>(ptr) + i)...};
            (st(row_at<O>(ptr) + i, output<O>(v, s)), ...);
        }
    }

    // strides.a[d * N + k]: byte stride of dim d for operand k (outputs, then inputs).
    template <int NDIM, typename Index>
    static __device__ __forceinline__ void strided(const S &s, ArrayStruct<NDIM, Index> shape,
                                                   ArrayStruct<NDIM * N, Index> strides, Index n,
                                                   int vectorized, T *...p) {
        const Row<T *...> ptr{p...};
        const Index step = (Index)gridDim.x * (Index)blockDim.x;
        Index count = n;
        int same_mask = 0;  // inputs broadcast along the inner dim: one value per pack
        if constexpr (VEC > 1 && NDIM == 2) {
            if (vectorized) {
                same_mask = pack_inner_dim<VEC, N, NOUT>(shape, strides);
                count = n / VEC;
            }
        }
        for (Index i = (Index)blockIdx.x * (Index)blockDim.x + (Index)threadIdx.x; i < count; i += step) {
            Index offset[N];
            strided_offsets<N, N>(i, shape, strides, offset);
            if constexpr (VEC > 1 && NDIM == 2) {
                if (vectorized) {
                    Row<Pack<Op_t<NOUT + I>, VEC>...> in;
                    Values same;
                    (load_vec<I>(in, same, same_mask, ptr, offset), ...);
                    Row<Pack<Op_t<O>, VEC>...> r;
#pragma unroll
                    for (int j = 0; j < VEC; ++j) {
                        const Values v{((same_mask >> I & 1) ? row_at<I>(same) : row_at<I>(in).v[j])...};
                        ((row_at<O>(r).v[j] = output<O>(v, s)), ...);
                    }
                    (st(at<Pack<Op_t<O>, VEC>>(row_at<O>(ptr), offset[O]), row_at<O>(r)), ...);
                    continue;
                }
            }
            const Values v{ld(at<Op_t<NOUT + I>>(row_at<NOUT + I>(ptr), offset[NOUT + I]))...};
            (st(at<Op_t<O>>(row_at<O>(ptr), offset[O]), output<O>(v, s)), ...);
        }
    }

    template <int K, typename P, typename V, typename Ptr, typename Index>
    static __device__ __forceinline__ void load_vec(P &in, V &same, int same_mask, const Ptr &ptr,
                                                    const Index *offset) {
        typedef Op_t<NOUT + K> Tk;
        if (same_mask >> K & 1) row_at<K>(same) = ld(at<Tk>(row_at<NOUT + K>(ptr), offset[NOUT + K]));
        else row_at<K>(in) = ld(at<Pack<Tk, VEC>>(row_at<NOUT + K>(ptr), offset[NOUT + K]));
    }
};

template <typename F, typename... T> struct FusedFor {
    typedef FusedBody<F, typename make_seq<F::nout>::type, typename make_seq<(int)sizeof...(T) - F::nout>::type, T...> type;
};

}  // namespace ic

// ---------------------------------------------------------------- kernels
template <typename F, typename... T>
__global__ void ew_fused_contig(ic::Scalars<F::nscalars> s, long long n, int vectorized, T *...p) {
    ic::FusedFor<F, T...>::type::contig(s, n, vectorized, p...);
}

template <typename F, int NDIM, typename Index, typename... T>
__global__ void ew_fused_strided(ic::Scalars<F::nscalars> s, ic::ArrayStruct<NDIM, Index> shape,
                                 ic::ArrayStruct<NDIM * (int)sizeof...(T), Index> strides, Index n,
                                 int vectorized, T *...p) {
    ic::FusedFor<F, T...>::type::template strided<NDIM, Index>(s, shape, strides, n, vectorized, p...);
}
