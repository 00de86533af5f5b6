package org.inagg.protocol;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Blocks cover every part exactly, never straddle two, and an all-reduce keeps its blocks of before. */
class BlockScheduleTest
{
    private final BlockSchedule schedule = new BlockSchedule();

    @Property
    void shouldCoverEveryPartWithBlocksThatStayInside(
        @ForAll @IntRange(min = 1, max = 9) final int parts, @ForAll @IntRange(min = 1, max = 1000) final int part,
        @ForAll @IntRange(min = 1, max = 300) final int lanes)
    {
        schedule.reset(parts, part, lanes);
        long next = 0;
        for (int b = 0; b < schedule.blocks(); b++)
        {
            assertThat(schedule.element(b)).isEqualTo(next);
            assertThat(schedule.length(b)).isBetween(1, lanes);
            assertThat((schedule.element(b) + schedule.length(b) - 1) / part).as("inside one part")
                .isEqualTo(schedule.part(b));
            next += schedule.length(b);
        }
        assertThat(next).isEqualTo((long)parts * part);
    }

    @Property
    void shouldCutAnAllReduceAsBefore(
        @ForAll @IntRange(min = 1, max = 100_000) final int elements, @ForAll @IntRange(min = 1, max = 400) final int lanes)
    {
        schedule.reset(1, elements, lanes);
        assertThat(schedule.blocks()).isEqualTo((elements + lanes - 1) / lanes);
        for (int b = 0; b < schedule.blocks(); b++)
        {
            assertThat(schedule.element(b)).isEqualTo((long)b * lanes);
            assertThat(schedule.length(b)).isEqualTo(Math.min(lanes, elements - b * lanes));
        }
    }

    @Test
    void shouldHaveNoBlocksForEmptyParts()
    {
        schedule.reset(4, 0, 256);
        assertThat(schedule.blocks()).isZero();
    }
}
