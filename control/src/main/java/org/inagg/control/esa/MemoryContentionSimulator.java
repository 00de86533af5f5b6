package org.inagg.control.esa;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.SplittableRandom;

/**
 * Slot-level simulation of jobs sharing aggregators, one tick at a time. Each job alternates compute and
 * synchronisation; while synchronising, its workers start at most one chunk per tick (line rate). A chunk started in
 * the switch holds a slot until the slowest worker's packet has arrived (a skew drawn as the largest of the job's
 * worker delays), and, except under ESA, one round trip more for the acknowledgement. A chunk that goes to the PS
 * instead takes {@code workers} ticks of the PS link (every worker's packet crosses it) behind the PS's backlog.
 */
public final class MemoryContentionSimulator {

    private static final int CHUNK_DONE = 0;
    private static final int SLOT_FREE = 1;

    private MemoryContentionSimulator() {
    }

    public static ContentionResult run(AllocationPolicy policy, ContentionSettings settings, List<EsaJob> jobs) {
        return new Run(policy, settings, jobs).simulate();
    }

    private static final class Run {
        private final AllocationPolicy policy;
        private final ContentionSettings settings;
        private final List<EsaJob> jobs;
        private final SplittableRandom random;
        private final int[] slotJob;
        private final int[] slotGeneration;
        private final long[] slotAggregatedAt;
        private final long[] slotAllocatedAt;
        private final ArrayDeque<Integer> freeSlots = new ArrayDeque<>();
        private final List<ArrayDeque<Integer>> ownFree = new ArrayList<>();
        private final List<ArrayDeque<Integer>> aggregating = new ArrayList<>();
        private final PriorityQueue<long[]> events = new PriorityQueue<>(Comparator.comparingLong(e -> e[0]));
        private final int[] iteration;
        private final int[] toStart;
        private final int[] done;
        private final long[] commFrom;
        private final long[] finish;
        private final long[] psFreeAt;
        private long fallbackBytes;
        private long preemptions;
        private double heldSlotTicks;

        Run(AllocationPolicy policy, ContentionSettings settings, List<EsaJob> jobs) {
            this.policy = policy;
            this.settings = settings;
            this.jobs = List.copyOf(jobs);
            this.random = new SplittableRandom(settings.seed());
            int slots = settings.slots();
            slotJob = new int[slots];
            slotGeneration = new int[slots];
            slotAggregatedAt = new long[slots];
            slotAllocatedAt = new long[slots];
            int n = jobs.size();
            for (int j = 0; j < n; j++) {
                ownFree.add(new ArrayDeque<>());
                aggregating.add(new ArrayDeque<>());
            }
            int share = Math.max(1, slots / n);
            for (int s = 0; s < slots; s++) {
                slotJob[s] = -1;
                if (policy == AllocationPolicy.STATIC_PARTITION) {
                    if (s / share < n) {
                        ownFree.get(s / share).add(s);
                    }
                } else {
                    freeSlots.add(s);
                }
            }
            iteration = new int[n];
            toStart = new int[n];
            done = new int[n];
            commFrom = new long[n];
            finish = new long[n];
            psFreeAt = new long[n];
            for (int j = 0; j < n; j++) {
                EsaJob job = jobs.get(j);
                toStart[j] = job.chunksPerIteration();
                commFrom[j] = job.arrivalTick() + job.computeTicks();
                finish[j] = -1;
                psFreeAt[j] = 0;
            }
        }

        ContentionResult simulate() {
            int n = jobs.size();
            int unfinished = n;
            long now = 0;
            Integer[] order = new Integer[n];
            for (int j = 0; j < n; j++) {
                order[j] = j;
            }
            while (unfinished > 0) {
                while (!events.isEmpty() && events.peek()[0] <= now) {
                    long[] event = events.poll();
                    int job = (int) event[2];
                    if (event[1] == CHUNK_DONE) {
                        if (++done[job] == jobs.get(job).chunksPerIteration()) {
                            unfinished -= finishIteration(job, now);
                        }
                    } else {
                        int slot = (int) event[3];
                        if (slotGeneration[slot] == event[4]) {
                            freeSlot(slot, now);
                        }
                    }
                }
                if (policy == AllocationPolicy.PREEMPTIVE_PRIORITY) {
                    Arrays.sort(order, Comparator.comparingLong(this::remainingChunks));
                } else {
                    Integer first = order[0];
                    System.arraycopy(order, 1, order, 0, n - 1);
                    order[n - 1] = first;
                }
                for (int j : order) {
                    if (finish[j] < 0 && now >= commFrom[j] && toStart[j] > 0) {
                        tryStart(j, now);
                    }
                }
                now++;
            }
            long[] completion = new long[n];
            long makespan = 0;
            for (int j = 0; j < n; j++) {
                completion[j] = finish[j] - jobs.get(j).arrivalTick();
                makespan = Math.max(makespan, finish[j]);
            }
            return new ContentionResult(policy, completion, fallbackBytes, preemptions,
                heldSlotTicks / ((double) settings.slots() * Math.max(1, makespan)));
        }

        private long remainingChunks(int job) {
            EsaJob spec = jobs.get(job);
            return (long) (spec.iterations() - iteration[job] - 1) * spec.chunksPerIteration() + toStart[job];
        }

        private int finishIteration(int job, long now) {
            EsaJob spec = jobs.get(job);
            done[job] = 0;
            if (++iteration[job] == spec.iterations()) {
                finish[job] = now;
                return 1;
            }
            toStart[job] = spec.chunksPerIteration();
            commFrom[job] = now + spec.computeTicks();
            return 0;
        }

        private void tryStart(int job, long now) {
            Integer slot = switch (policy) {
                case STATIC_PARTITION -> ownFree.get(job).poll();
                case DEALLOCATE_ON_ACK -> freeSlots.poll();
                case PREEMPTIVE_PRIORITY -> {
                    Integer free = freeSlots.poll();
                    yield free != null ? free : preemptFor(job, now);
                }
            };
            if (slot != null) {
                startInSwitch(job, slot, now);
            } else if (policy != AllocationPolicy.STATIC_PARTITION && psFreeAt[job] - now <= jobs.get(job).workers()) {
                sendToPs(job, now);
            } else {
                return;
            }
            toStart[job]--;
        }

        private void startInSwitch(int job, int slot, long now) {
            int workers = jobs.get(job).workers();
            long skew = Math.round(settings.maxSkewTicks() * Math.pow(random.nextDouble(), 1.0 / workers));
            long aggregatedAt = now + 1 + skew;
            slotJob[slot] = job;
            slotAllocatedAt[slot] = now;
            slotAggregatedAt[slot] = aggregatedAt;
            int generation = ++slotGeneration[slot];
            aggregating.get(job).add(slot);
            long freeAt = policy == AllocationPolicy.PREEMPTIVE_PRIORITY ? aggregatedAt
                : aggregatedAt + settings.roundTripTicks();
            events.add(new long[] {aggregatedAt + settings.roundTripTicks(), CHUNK_DONE, job, slot, generation});
            events.add(new long[] {freeAt, SLOT_FREE, job, slot, generation});
        }

        private void sendToPs(int job, long now) {
            int workers = jobs.get(job).workers();
            psFreeAt[job] = Math.max(now, psFreeAt[job]) + workers;
            fallbackBytes += (long) workers * settings.chunkBytes();
            events.add(new long[] {psFreeAt[job] + settings.roundTripTicks(), CHUNK_DONE, job, -1, 0});
        }

        /** Takes the slot of the lowest-priority chunk still aggregating, if its job ranks below {@code job}. */
        private Integer preemptFor(int job, long now) {
            long mine = remainingChunks(job);
            int victim = -1;
            long victimRemaining = mine;
            for (int other = 0; other < jobs.size(); other++) {
                ArrayDeque<Integer> held = aggregating.get(other);
                while (!held.isEmpty() && (slotJob[held.peekLast()] != other
                    || slotAggregatedAt[held.peekLast()] <= now)) {
                    held.pollLast();
                }
                if (other != job && !held.isEmpty() && remainingChunks(other) > victimRemaining) {
                    victim = other;
                    victimRemaining = remainingChunks(other);
                }
            }
            if (victim < 0) {
                return null;
            }
            int slot = aggregating.get(victim).pollLast();
            heldSlotTicks += now - slotAllocatedAt[slot];
            slotGeneration[slot]++;
            slotJob[slot] = -1;
            preemptions++;
            sendToPs(victim, now);
            return slot;
        }

        private void freeSlot(int slot, long now) {
            int job = slotJob[slot];
            heldSlotTicks += now - slotAllocatedAt[slot];
            slotJob[slot] = -1;
            slotGeneration[slot]++;
            if (policy == AllocationPolicy.STATIC_PARTITION) {
                ownFree.get(job).add(slot);
            } else {
                freeSlots.add(slot);
            }
        }
    }
}
