// inagg fixed-point kernels: the CUDA twin of org.inagg.fixedpoint (FixedPoint, ScalarFixedPointConverter).
//
// Every kernel performs, lane for lane, the float operations of the Java converters so results are bit-identical:
// IEEE round-to-nearest multiply (__fmul_rn), truncating float->int (__float2int_rz), round-to-nearest int->float
// (__int2float_rn) and an exact subtraction (__fsub_rn). Build with -fmad=false so nvcc never contracts a multiply
// and an add into an FMA (the explicit intrinsics already forbid it; the flag guards later edits).
//
// Tensors are cut into fixed-point blocks of `blockSize` lanes from the start of the buffer (one packet each);
// exponents[b] is the job-wide exponent E of block b, shift = 31 - headroom - E, headroom = headroomBits(workers).
//
// Rebuild the committed PTX (gpu/src/main/resources/org/inagg/gpu/inagg_kernels.ptx) with
//   gpu/scripts/build-ptx.sh          or          ./mvnw -f gpu/pom.xml -Pptx generate-resources

#include <stdint.h>

#define INAGG_MIN_EXPONENT (-96)
#define INAGG_NON_FINITE 0x7FFFFFFF
#define INAGG_THREADS 256

// 2^e as a float, exact for every normal power (|shift| <= 126 here: see FixedPoint.shift's range).
__device__ __forceinline__ float pow2f(int e)
{
    return __int_as_float((e + 127) << 23);
}

__device__ __forceinline__ int toLaneOrder(int value, int bigEndian)
{
    return bigEndian ? (int)__byte_perm((unsigned)value, 0u, 0x0123) : value;
}

// round_half_away(x * scale), as ScalarFixedPointConverter.quantizeRange.
__device__ __forceinline__ int quantizeLane(float x, float scale)
{
    const float y = __fmul_rn(x, scale);
    const int truncated = __float2int_rz(y);
    const float fraction = __fsub_rn(y, __int2float_rn(truncated));
    return fraction >= 0.5f ? truncated + 1 : (fraction <= -0.5f ? truncated - 1 : truncated);
}

__device__ __forceinline__ float shiftScale(const int* exponents, long long i, int blockSize, int headroom)
{
    return pow2f(31 - headroom - exponents[i / blockSize]);
}

extern "C" {

// One CUDA block per fixed-point block (grid-stride over blocks): exponent of max(floatBits & 0x7FFFFFFF),
// FixedPoint.exponentOfMaxMagnitudeBits: NON_FINITE for NaN, inf and magnitudes >= 2^127, else max((bits >> 23) - 126, -96).
__global__ void inagg_block_exponents(const float* __restrict__ x, long long n, int blockSize, int* __restrict__ exponents)
{
    __shared__ int partial[INAGG_THREADS / 32];
    const long long blocks = (n + blockSize - 1) / blockSize;
    for (long long b = blockIdx.x; b < blocks; b += gridDim.x)
    {
        const long long start = b * blockSize;
        const long long end = min(start + blockSize, n);
        int max = 0;
        for (long long i = start + threadIdx.x; i < end; i += blockDim.x)
        {
            max = ::max(max, __float_as_int(x[i]) & 0x7FFFFFFF);
        }
        for (int offset = 16; offset > 0; offset >>= 1)
        {
            max = ::max(max, __shfl_down_sync(0xFFFFFFFFu, max, offset));
        }
        if ((threadIdx.x & 31) == 0)
        {
            partial[threadIdx.x >> 5] = max;
        }
        __syncthreads();
        if (threadIdx.x == 0)
        {
            for (int w = 1; w < (int)(blockDim.x >> 5); w++)
            {
                max = ::max(max, partial[w]);
            }
            exponents[b] = max >= 0x7F000000 ? INAGG_NON_FINITE : ::max((max >> 23) - 126, INAGG_MIN_EXPONENT);
        }
        __syncthreads();
    }
}

// Element-wise max of k exponent arrays (the host-level exponent of a server's devices).
__global__ void inagg_max_k(const int* const* __restrict__ sources, int k, long long n, int* __restrict__ out)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    {
        int max = sources[0][i];
        for (int j = 1; j < k; j++)
        {
            max = ::max(max, sources[j][i]);
        }
        out[i] = max;
    }
}

// lanes[i] = round_half_away(x[i] * 2^shift(block of i)), in big-endian (wire) or native order.
__global__ void inagg_quantize(const float* __restrict__ x, long long n, int blockSize, const int* __restrict__ exponents,
    int headroom, int bigEndian, int* __restrict__ lanes)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    {
        lanes[i] = toLaneOrder(quantizeLane(x[i], shiftScale(exponents, i, blockSize, headroom)), bigEndian);
    }
}

// x[i] = (float)lane[i] * 2^-shift(block of i).
__global__ void inagg_dequantize(const int* __restrict__ lanes, long long n, int blockSize,
    const int* __restrict__ exponents, int headroom, int bigEndian, float* __restrict__ x)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    {
        const float inverse = pow2f(exponents[i / blockSize] + headroom - 31);
        x[i] = __fmul_rn(__int2float_rn(toLaneOrder(lanes[i], bigEndian)), inverse);
    }
}

// out[i] = ((s0[i] + s1[i]) + s2[i]) + ... in float, left to right (CpuReducer adds in the same order).
__global__ void inagg_sum_k_f32(const float* const* __restrict__ sources, int k, long long n, float* __restrict__ out)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    {
        float sum = sources[0][i];
        for (int j = 1; j < k; j++)
        {
            sum = __fadd_rn(sum, sources[j][i]);
        }
        out[i] = sum;
    }
}

// out[i] = s0[i] + s1[i] + ... in int32 with two's-complement wrap-around, as the switch adds.
__global__ void inagg_sum_k_s32(const int* const* __restrict__ sources, int k, long long n, int* __restrict__ out)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    {
        unsigned sum = (unsigned)sources[0][i];
        for (int j = 1; j < k; j++)
        {
            sum += (unsigned)sources[j][i];
        }
        out[i] = (int)sum;
    }
}

// Fused: lanes[i] = sum over j of round_half_away(s_j[i] * 2^shift): every source quantized with the job-wide
// exponent, then added as int32. Exactly the sum a switch would compute from k workers' packets.
__global__ void inagg_reduce_quantize(const float* const* __restrict__ sources, int k, long long n, int blockSize,
    const int* __restrict__ exponents, int headroom, int bigEndian, int* __restrict__ lanes)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    {
        const float scale = shiftScale(exponents, i, blockSize, headroom);
        unsigned sum = 0u;
        for (int j = 0; j < k; j++)
        {
            sum += (unsigned)quantizeLane(sources[j][i], scale);
        }
        lanes[i] = toLaneOrder((int)sum, bigEndian);
    }
}

}
