// CPU emulation of the CUDA device features gpu/src/main/cuda/inagg_kernels.cu uses, so that the unchanged .cu file
// compiles with g++ and its kernels run on the CPU (CudaKernelEmulationTest compares them with CpuReducer):
//
//   g++ -std=c++20 -O1 -ffp-contract=off -fwrapv -pthread [-msse2 -mfpmath=sse on x86] -I<this dir>
//       -x c++ -include cuda_emulation.h inagg_kernels.cu -x c++ kernel_driver.cpp
//
// What is modelled, and how faithfully:
// - Float arithmetic (__fmul_rn, __fadd_rn, __fsub_rn): IEEE binary32 round-to-nearest-even with subnormals kept (as
//   PTX mul.rn/add.rn/sub.rn.f32 without .ftz, which is what nvcc emits without --use_fast_math / -ftz=true). The
//   host must evaluate float expressions in float (FLT_EVAL_METHOD == 0: SSE on x86-64, not x87; checked below) and
//   must not contract a*b+c into an FMA (-ffp-contract=off). A NaN result is returned as the GPU's canonical NaN
//   0x7FFFFFFF (NVIDIA GPUs do not propagate NaN payloads; x86 does), so NaN bit patterns follow the GPU, not the CPU.
// - __float2int_rz: PTX cvt.rzi.s32.f32, which truncates and saturates: NaN -> 0, >= 2^31 -> INT_MAX,
//   < -2^31 -> INT_MIN (C++'s (int)f is undefined there and x86 cvttss2si returns INT_MIN for all three).
// - __int2float_rn: cvt.rn.f32.s32 (round to nearest even), the host's (float)int under the default MXCSR.
// - Integer arithmetic: PTX add/sub/mul.lo wrap in two's complement; compile with -fwrapv so the C++ model does too.
// - __byte_perm, __float_as_int, __int_as_float: exact bit-level definitions from the CUDA Math API.
// - Threads: emulate_launch() runs the grid's blocks one after another. Kernels without block-level cooperation run
//   their threads one after another on the calling thread (kCooperative == false); kernels that use __shared__,
//   __syncthreads() or warp shuffles run each block's threads as real std::threads (kCooperative == true), with a
//   std::barrier per block for __syncthreads() and one per 32-lane warp for __shfl_down_sync, so the kernel's real
//   synchronization structure is exercised (a missing barrier shows up as a data race or a wrong result, a barrier not
//   reached by every thread as a hang, which the driver's watchdog turns into a failure).
// - __shared__ variables are function-local statics: one copy shared by all threads, reused block after block (blocks
//   never run concurrently here), like shared memory that is not initialized between blocks.
// - Warp shuffles: every lane of the 32-lane warp deposits its value, waits for the whole warp, reads lane
//   (lane + delta) if that is < width (32), else its own value, and waits again before the next shuffle. The mask
//   must name exactly the warp's existing lanes (full warps here); a divergent shuffle aborts.
#pragma once

#include <barrier>
#include <cfloat>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "float expressions must be evaluated in float (x86-64: -msse2 -mfpmath=sse, not x87)"
#endif
#if defined(__FAST_MATH__)
#error "compile without -ffast-math"
#endif

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __shared__ static

struct uint3
{
    unsigned int x, y, z;
};

struct dim3
{
    unsigned int x, y, z;
};

inline constexpr int warpSize = 32;

inline thread_local uint3 threadIdx {0, 0, 0};
inline thread_local uint3 blockIdx {0, 0, 0};
inline thread_local dim3 blockDim {1, 1, 1};
inline thread_local dim3 gridDim {1, 1, 1};

namespace cuda_emulation
{
[[noreturn]] inline void fail(const char* what)
{
    std::fprintf(stderr, "cuda_emulation: %s\n", what);
    std::fflush(stderr);
    std::abort();
}

struct Warp
{
    explicit Warp(int lanes) : lanes(lanes), sync(lanes)
    {
    }
    const int lanes;
    std::barrier<> sync;
    int values[32] {};
    unsigned masks[32] {};
};

struct Block
{
    explicit Block(int threads) : sync(threads)
    {
        for (int first = 0; first < threads; first += 32)
        {
            warps.push_back(std::make_unique<Warp>(threads - first < 32 ? threads - first : 32));
        }
    }
    std::barrier<> sync;
    std::vector<std::unique_ptr<Warp>> warps;
};

// The block and warp of the calling emulated thread; null for kernels run without cooperation.
inline thread_local Block* currentBlock = nullptr;

inline float bitsToFloat(uint32_t bits)
{
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

inline uint32_t floatToBits(float f)
{
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    return bits;
}

// NVIDIA GPUs return the canonical NaN 0x7FFFFFFF for any NaN result of an arithmetic instruction.
inline float canonical(float result)
{
    return result != result ? bitsToFloat(0x7FFFFFFFu) : result;
}

// Runs `kernel` (a callable launching one thread's work) over a grid of grid.x blocks of block.x threads.
template <bool kCooperative, class Kernel>
void emulateLaunch(const dim3 grid, const dim3 block, Kernel kernel)
{
    if (grid.y != 1 || grid.z != 1 || block.y != 1 || block.z != 1 || grid.x == 0 || block.x == 0 || block.x > 1024)
    {
        fail("only 1-D launches with 1..1024 threads per block are emulated");
    }
    if constexpr (!kCooperative)
    {
        gridDim = grid;
        blockDim = block;
        for (unsigned b = 0; b < grid.x; b++)
        {
            blockIdx = uint3 {b, 0, 0};
            for (unsigned t = 0; t < block.x; t++)
            {
                threadIdx = uint3 {t, 0, 0};
                kernel();
            }
        }
    }
    else
    {
        Block state(static_cast<int>(block.x));
        std::vector<std::thread> threads;
        threads.reserve(block.x);
        for (unsigned t = 0; t < block.x; t++)
        {
            threads.emplace_back([&state, &kernel, grid, block, t] {
                currentBlock = &state;
                gridDim = grid;
                blockDim = block;
                threadIdx = uint3 {t, 0, 0};
                for (unsigned b = 0; b < grid.x; b++)
                {
                    blockIdx = uint3 {b, 0, 0};
                    kernel();
                    // The next block starts when every thread of this one has returned (its shared memory is free).
                    state.sync.arrive_and_wait();
                }
                currentBlock = nullptr;
            });
        }
        for (auto& thread : threads)
        {
            thread.join();
        }
    }
}
} // namespace cuda_emulation

// ---- synchronization -------------------------------------------------------------------------------------------

inline void __syncthreads()
{
    if (cuda_emulation::currentBlock == nullptr)
    {
        cuda_emulation::fail("__syncthreads() in a kernel launched without cooperation (emulateLaunch<true>)");
    }
    cuda_emulation::currentBlock->sync.arrive_and_wait();
}

inline int __shfl_down_sync(const unsigned mask, const int var, const unsigned delta, const int width = warpSize)
{
    cuda_emulation::Block* const block = cuda_emulation::currentBlock;
    if (block == nullptr)
    {
        cuda_emulation::fail("__shfl_down_sync in a kernel launched without cooperation (emulateLaunch<true>)");
    }
    if (width != 32)
    {
        cuda_emulation::fail("__shfl_down_sync: only width 32 is emulated");
    }
    cuda_emulation::Warp& warp = *block->warps[threadIdx.x / 32];
    const int lane = static_cast<int>(threadIdx.x % 32);
    const unsigned present = warp.lanes == 32 ? 0xFFFFFFFFu : ((1u << warp.lanes) - 1u);
    if (mask != present)
    {
        cuda_emulation::fail("__shfl_down_sync: the mask must name exactly the warp's lanes (every lane participates)");
    }
    warp.values[lane] = var;
    warp.masks[lane] = mask;
    warp.sync.arrive_and_wait();
    for (int other = 0; other < warp.lanes; other++)
    {
        if (warp.masks[other] != mask)
        {
            cuda_emulation::fail("__shfl_down_sync: lanes of one warp passed different masks");
        }
    }
    const int source = lane + static_cast<int>(delta);
    const int result = source < width && source < warp.lanes ? warp.values[source] : var;
    warp.sync.arrive_and_wait();
    return result;
}

// ---- integer min/max (CUDA's overloads for the types the kernels use) ------------------------------------------

__device__ inline int max(const int a, const int b)
{
    return a > b ? a : b;
}

__device__ inline int min(const int a, const int b)
{
    return a < b ? a : b;
}

__device__ inline long long max(const long long a, const long long b)
{
    return a > b ? a : b;
}

__device__ inline long long min(const long long a, const long long b)
{
    return a < b ? a : b;
}

__device__ inline unsigned max(const unsigned a, const unsigned b)
{
    return a > b ? a : b;
}

__device__ inline unsigned min(const unsigned a, const unsigned b)
{
    return a < b ? a : b;
}

// ---- intrinsics ------------------------------------------------------------------------------------------------

__device__ inline float __int_as_float(const int x)
{
    return cuda_emulation::bitsToFloat(static_cast<uint32_t>(x));
}

__device__ inline int __float_as_int(const float x)
{
    return static_cast<int>(cuda_emulation::floatToBits(x));
}

__device__ inline float __fmul_rn(const float a, const float b)
{
    return cuda_emulation::canonical(a * b);
}

__device__ inline float __fadd_rn(const float a, const float b)
{
    return cuda_emulation::canonical(a + b);
}

__device__ inline float __fsub_rn(const float a, const float b)
{
    return cuda_emulation::canonical(a - b);
}

__device__ inline int __float2int_rz(const float x)
{
    if (x != x)
    {
        return 0;
    }
    if (x >= 2147483648.0f)
    {
        return INT_MAX;
    }
    if (x < -2147483648.0f)
    {
        return INT_MIN;
    }
    return static_cast<int>(x); // truncation, in range
}

__device__ inline float __int2float_rn(const int x)
{
    return static_cast<float>(x);
}

// result byte n = byte s<4n+2:4n> of the 8 bytes {y, x} (x is bytes 0..3); the upper 16 selector bits are unused.
__device__ inline unsigned __byte_perm(const unsigned x, const unsigned y, const unsigned s)
{
    const uint64_t bytes = (static_cast<uint64_t>(y) << 32) | x;
    unsigned result = 0;
    for (int n = 0; n < 4; n++)
    {
        const unsigned select = (s >> (4 * n)) & 7u;
        result |= static_cast<unsigned>((bytes >> (8 * select)) & 0xFFu) << (8 * n);
    }
    return result;
}
