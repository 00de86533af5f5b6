package org.inagg.services.controller;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class SlotAllocatorTest
{
    @Test
    @Timeout(5)
    void shouldPlaceRangesFirstFitWithoutOverlapAndReuseFreedOnes()
    {
        final SlotAllocator slots = new SlotAllocator(100);
        assertThat(slots.allocate(40, "a")).isZero();
        assertThat(slots.allocate(40, "b")).isEqualTo(40);
        assertThat(slots.allocate(40, "c")).as("20 left").isEqualTo(-1);
        assertThat(slots.allocate(20, "c")).isEqualTo(80);
        assertThat(slots.free(0)).isTrue();
        assertThat(slots.allocate(30, "d")).isZero();
        assertThat(slots.allocate(10, "e")).isEqualTo(30);
        assertThat(slots.freeSlots()).isZero();
        assertThat(slots.ranges()).allSatisfy(r -> assertThat(slots.ranges().stream()
            .filter(o -> o != r && o.overlaps(r.base(), r.slots()))).isEmpty());
    }

    @Test
    @Timeout(5)
    void shouldNeverHandOutTheReservedEsaPool()
    {
        final SlotAllocator slots = new SlotAllocator(100);
        assertThat(slots.reserve(20, 50, "the ESA pool")).isTrue();
        assertThat(slots.reserve(60, 20, "x")).as("overlaps the ESA pool").isFalse();
        assertThat(slots.allocate(31, "a")).as("neither 0..19 nor 70..99 hold 31").isEqualTo(-1);
        assertThat(slots.allocate(20, "a")).isZero();
        assertThat(slots.allocate(30, "b")).isEqualTo(70);
        assertThat(slots.overlapping(25, 1).owner()).isEqualTo("the ESA pool");
    }
}
