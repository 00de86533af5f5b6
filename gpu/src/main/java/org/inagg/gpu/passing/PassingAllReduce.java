package org.inagg.gpu.passing;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.inagg.api.AllReduceJob;
import org.inagg.api.ElementType;
import org.inagg.gpu.BlockScaling;
import org.inagg.gpu.DeviceBuffer;
import org.inagg.gpu.Fence;
import org.inagg.gpu.LaneOrder;
import org.inagg.gpu.ReductionDevice;

/**
 * One host's side of a PASSING all-reduce over H hosts of G GPUs: the float gradients of the host's G devices are
 * summed with those of every other host, in place, with results bit-identical to a flat in-network all-reduce of all
 * H*G gradients (what {@link PerGpuAllReduce} does).
 * <pre>
 *   host h, devices d0..d(G-1)           switch (jobs J0..J(G-1), H contributors each)
 *   1. each dj: block exponents of its gradient
 *   2. dg: max over the host's devices of the exponents of chunk g        (in-host reduce-scatter)
 *   3. chunk g's exponents agreed across hosts over job Jg                ({@link ExponentAgreement})
 *   4. dg: lanes = sum_j quantize(chunk g of dj's gradient)  int32        (in-host reduce-scatter, fused)
 *   5. lanes all-reduced as int32 over Jg, piece by piece, while dg      (in-network aggregation)
 *      quantizes the next piece into pinned host memory
 *   6. dg: dequantize chunk g into its gradient; copy it to every dj       (in-host all-gather)
 * </pre>
 * <b>Exactness.</b> Every GPU's values are quantized with the job-wide exponent and the shift of W = H*G workers, and
 * only integers are added (in-host and in the switch), so the final int32 sum is exactly the sum a flat all-reduce of
 * the H*G gradients computes, and its dequantization is the same float: bit-identical. (Summing the G floats in-host
 * and quantizing the sum would not be: float addition rounds, and the result would differ from the flat all-reduce
 * within {@code FixedPoint.sumErrorBound}.) Against the exact real sum the error is that of the flat all-reduce:
 * at most {@code H*G * 2^(-shift-1)} plus half an ulp of the result.
 * <p>
 * Chunk g is the g-th of G ranges of whole blocks (a block is the job's lanes per packet), so exponents never straddle
 * chunks. Device g reads chunk g of every local gradient: the devices must address each other's buffers (one
 * {@link ReductionDevice} playing G logical GPUs, the CPU reducer, or GPUs with peer access). Not thread-safe: one
 * all-reduce at a time per host.
 */
public final class PassingAllReduce implements AutoCloseable
{
    /** Blocks quantized and sent per piece, so quantizing piece k+1 overlaps piece k on the wire. */
    public static final int PIECE_BLOCKS_DEFAULT = 64;

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;

    private final List<ReductionDevice> devices;
    private final AllReduceJob[] jobs;
    private final int hosts;
    private final int blockSize;
    private final int pieceBlocks;
    private final ExponentAgreement agreement;
    private final Workspace[] workspaces;

    /**
     * @param devices     the host's G devices (the same device may appear G times).
     * @param jobs        job g carries chunk g between the H hosts (each job has H workers; this host's worker id is
     *                    its host number).
     * @param blockSize   lanes per block: the jobs' lanes per packet, and the flat all-reduce's block size.
     * @param pieceBlocks blocks per pipelined piece.
     */
    public PassingAllReduce(
        final List<ReductionDevice> devices, final List<AllReduceJob> jobs, final int blockSize, final int pieceBlocks)
    {
        if (devices.isEmpty() || devices.size() != jobs.size())
        {
            throw new IllegalArgumentException("need one job per device, got " + devices.size() + " devices and "
                + jobs.size() + " jobs");
        }
        this.devices = List.copyOf(devices);
        this.jobs = jobs.toArray(new AllReduceJob[0]);
        this.hosts = jobs.get(0).context().workers();
        for (final AllReduceJob job : jobs)
        {
            if (job.context().workers() != hosts)
            {
                throw new IllegalArgumentException("every chunk's job needs the same number of hosts");
            }
        }
        this.blockSize = blockSize;
        this.pieceBlocks = pieceBlocks;
        this.agreement = new ExponentAgreement(hosts);
        this.workspaces = new Workspace[devices.size()];
    }

    public int hosts()
    {
        return hosts;
    }

    public int devicesPerHost()
    {
        return devices.size();
    }

    /** Contributors to every sum: H*G, which sets the fixed-point headroom. */
    public int contributors()
    {
        return hosts * devices.size();
    }

    /**
     * Replaces each of the G gradients (gradient j on device j, {@code count} floats each) with the sum over all
     * hosts' gradients. Every host must call it with the same {@code count}.
     */
    public void allReduce(final List<DeviceBuffer> gradients, final long count)
    {
        final int g = devices.size();
        if (gradients.size() != g)
        {
            throw new IllegalArgumentException("need " + g + " gradients, got " + gradients.size());
        }
        final long blocks = (count + blockSize - 1) / blockSize;
        final long[] firstBlock = new long[g + 1];
        for (int c = 0; c <= g; c++)
        {
            firstBlock[c] = blocks * c / g;
        }
        for (int c = 0; c < g; c++)
        {
            ensureWorkspace(c, blocks, (firstBlock[c + 1] - firstBlock[c]) * blockSize);
        }

        // 1. Every device: exponents of its own gradient's blocks.
        for (int j = 0; j < g; j++)
        {
            devices.get(j).blockExponents(gradients.get(j), count, blockSize, workspaces[j].localExponents);
        }
        fenceAll();

        // 2. Device c: the host's exponents of chunk c (max over the host's devices) into pinned host memory.
        final int[][] exponents = new int[g][];
        for (int c = 0; c < g; c++)
        {
            final long chunkBlocks = firstBlock[c + 1] - firstBlock[c];
            final List<DeviceBuffer> local = new ArrayList<>(g);
            for (int j = 0; j < g; j++)
            {
                local.add(workspaces[j].localExponents.elements(firstBlock[c], chunkBlocks));
            }
            devices.get(c).maxExponents(local, chunkBlocks, workspaces[c].agreedExponents);
        }
        for (int c = 0; c < g; c++)
        {
            devices.get(c).fence().await();
            final MemorySegment host = workspaces[c].agreedExponentsHost;
            exponents[c] = new int[(int)(firstBlock[c + 1] - firstBlock[c])];
            MemorySegment.copy(host, INT, 0, exponents[c], 0, exponents[c].length);
        }

        // 3. Across hosts, chunk c over job c.
        agreement.agree(jobs, exponents);
        for (int c = 0; c < g; c++)
        {
            MemorySegment.copy(exponents[c], 0, workspaces[c].agreedExponentsHost, INT, 0, exponents[c].length);
        }

        // 4.-5. Pieces of every chunk, interleaved across chunks: quantize piece k+1 while piece k is on the wire.
        final List<Piece> pieces = new ArrayList<>();
        final long maxChunkBlocks = firstBlock[g] == 0 ? 0 : maxChunk(firstBlock);
        for (long p = 0; p * pieceBlocks < maxChunkBlocks; p++)
        {
            for (int c = 0; c < g; c++)
            {
                final long chunkBlocks = firstBlock[c + 1] - firstBlock[c];
                final long from = p * pieceBlocks;
                if (from < chunkBlocks)
                {
                    pieces.add(quantizePiece(c, gradients, count, firstBlock[c], from,
                        Math.min(pieceBlocks, chunkBlocks - from)));
                }
            }
        }
        for (final Piece piece : pieces)
        {
            Futures.join(piece.sent());
            // 6. Dequantize into device c's gradient, then all-gather the piece to the host's other devices.
            final ReductionDevice device = devices.get(piece.chunk());
            final DeviceBuffer own = gradients.get(piece.chunk()).elements(piece.firstElement(), piece.elements());
            device.dequantize(piece.lanes(), piece.elements(), piece.scaling(), LaneOrder.NATIVE, own);
            for (int j = 0; j < g; j++)
            {
                if (j != piece.chunk())
                {
                    device.copy(own, gradients.get(j).elements(piece.firstElement(), piece.elements()),
                        piece.elements() * Float.BYTES);
                }
            }
        }
        for (final ReductionDevice device : devices)
        {
            device.synchronize();
        }
    }

    private record Piece(
        int chunk, long firstElement, long elements, DeviceBuffer lanes, BlockScaling scaling,
        CompletableFuture<Void> sent)
    {
    }

    private Piece quantizePiece(
        final int chunk, final List<DeviceBuffer> gradients, final long count, final long chunkFirstBlock,
        final long fromBlock, final long blocks)
    {
        final Workspace w = workspaces[chunk];
        final long firstElement = (chunkFirstBlock + fromBlock) * blockSize;
        final long elements = Math.min(blocks * blockSize, count - firstElement);
        final long laneOffset = fromBlock * blockSize;
        final DeviceBuffer lanes = w.lanes.elements(laneOffset, elements);
        final BlockScaling scaling = new BlockScaling(w.agreedExponents, blockSize, contributors())
            .fromBlock(fromBlock, blocks);
        final List<DeviceBuffer> sources = new ArrayList<>(gradients.size());
        for (final DeviceBuffer gradient : gradients)
        {
            sources.add(gradient.elements(firstElement, elements));
        }
        final ReductionDevice device = devices.get(chunk);
        device.reduceAndQuantize(sources, elements, scaling, LaneOrder.NATIVE, lanes);
        final Fence quantized = device.fence();
        quantized.await();
        final MemorySegment wire = w.lanesHost.asSlice(laneOffset * Integer.BYTES, elements * Integer.BYTES);
        final CompletableFuture<Void> sent = jobs[chunk].allReduceAsync(wire, wire, ElementType.INT32);
        return new Piece(chunk, firstElement, elements, lanes, scaling, sent);
    }

    private static long maxChunk(final long[] firstBlock)
    {
        long max = 0;
        for (int c = 0; c + 1 < firstBlock.length; c++)
        {
            max = Math.max(max, firstBlock[c + 1] - firstBlock[c]);
        }
        return max;
    }

    private void fenceAll()
    {
        for (final ReductionDevice device : devices)
        {
            device.fence().await();
        }
    }

    /** Buffers of device c, kept across calls and grown when a larger tensor comes. */
    private static final class Workspace implements AutoCloseable
    {
        final long blocks;
        final long chunkElements;
        final DeviceBuffer localExponents;
        final DeviceBuffer agreedExponents;
        final MemorySegment agreedExponentsHost;
        final DeviceBuffer lanes;
        final MemorySegment lanesHost;

        Workspace(final ReductionDevice device, final long blocks, final long chunkElements)
        {
            this.blocks = blocks;
            this.chunkElements = chunkElements;
            this.localExponents = device.allocate(Math.max(1, blocks) * Integer.BYTES);
            this.agreedExponents = device.allocateHost(Math.max(1, blocks) * Integer.BYTES);
            this.agreedExponentsHost = agreedExponents.hostSegment().orElseThrow();
            this.lanes = device.allocateHost(Math.max(1, chunkElements) * Integer.BYTES);
            this.lanesHost = lanes.hostSegment().orElseThrow();
        }

        @Override
        public void close()
        {
            localExponents.close();
            agreedExponents.close();
            lanes.close();
        }
    }

    private void ensureWorkspace(final int c, final long blocks, final long chunkElements)
    {
        final Workspace w = workspaces[c];
        if (w == null || w.blocks < blocks || w.chunkElements < chunkElements)
        {
            if (w != null)
            {
                w.close();
            }
            workspaces[c] = new Workspace(devices.get(c), blocks, chunkElements + blockSize);
        }
    }

    /** Frees the workspaces; the jobs and devices stay the caller's. */
    @Override
    public void close()
    {
        for (int c = 0; c < workspaces.length; c++)
        {
            if (workspaces[c] != null)
            {
                workspaces[c].close();
                workspaces[c] = null;
            }
        }
    }
}
