/**
 * Fixed-point reduction on accelerators: the {@link org.inagg.gpu.ReductionDevice} interface (block exponents,
 * quantize, dequantize, sum of k buffers, fused reduce-and-quantize), the Vector API {@link org.inagg.gpu.CpuReducer}
 * that is the default without a GPU, and the JCuda {@link org.inagg.gpu.CudaReducer} running the kernels of
 * {@code src/main/cuda/inagg_kernels.cu} from the PTX shipped beside this package. Every implementation gives results
 * bit-identical to {@link org.inagg.fixedpoint.ScalarFixedPointConverter}.
 */
package org.inagg.gpu;
