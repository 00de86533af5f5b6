package org.inagg.control.sim;

/**
 * Something that moves at one rate: a flow, a multicast tree, or an aggregation group with all its members.
 *
 * @param name          for reports
 * @param resources     resource indices it uses
 * @param coefficients  how much of each resource one unit of its rate takes (a group of n members takes n on its
 *                      switch, a multicast tree 1 on each of its links)
 * @param volume        how much it must move (Gb), for {@link FlowSimulator}
 */
public record FlowUnit(String name, int[] resources, double[] coefficients, double volume) {

    public FlowUnit {
        if (resources.length != coefficients.length) {
            throw new IllegalArgumentException("one coefficient per resource");
        }
        resources = resources.clone();
        coefficients = coefficients.clone();
    }
}
