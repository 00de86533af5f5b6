package org.inagg.control.topology;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class PathFinderPropertiesTest {

    @Property(tries = 50)
    void shouldOnlyReturnSimplePathsWithinTheSlack(@ForAll @IntRange(min = 1, max = 4) int spines,
                                                    @ForAll @IntRange(min = 2, max = 5) int leaves,
                                                    @ForAll @IntRange(min = 0, max = 2) int slack,
                                                    @ForAll long seed) {
        Topology fabric = Topologies.spineLeaf(spines, leaves, 2, 2 * leaves - 1, 1, FabricSpec.uniform100G());
        PathFinder finder = new PathFinder(fabric);
        int source = fabric.index("W0");
        int target = fabric.index("PS0");
        int shortest = finder.hopsTo(target)[source];

        List<Path> paths = finder.paths(source, target, slack, 16, seed);

        assertThat(paths).isNotEmpty().doesNotHaveDuplicates();
        for (Path path : paths) {
            assertThat(path.length()).isBetween(shortest, shortest + slack);
            assertThat(fabric.tail(path.arc(0))).isEqualTo(source);
            assertThat(fabric.head(path.arc(path.length() - 1))).isEqualTo(target);
            Set<Integer> visited = new HashSet<>();
            visited.add(source);
            for (int i = 0; i < path.length(); i++) {
                if (i > 0) {
                    assertThat(fabric.tail(path.arc(i))).isEqualTo(fabric.head(path.arc(i - 1)));
                }
                assertThat(visited.add(fabric.head(path.arc(i)))).as("simple").isTrue();
            }
        }
    }
}
