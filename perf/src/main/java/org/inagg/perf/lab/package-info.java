/**
 * A lab on one machine around a real P4 target: hosts in network namespaces joined by veth pairs to a bmv2
 * {@code simple_switch} running {@code inagg_v1model.p4}, programmed at run time by the control plane
 * ({@link org.inagg.p4.bmv2.Bmv2Switch}), and unmodified {@code inagg worker} processes on the hosts. Used by
 * {@code inagg local --switch bmv2} and the Bmv2 end-to-end tests. Also the emulated networks without P4: one switch
 * ({@link org.inagg.perf.lab.EmulatedCluster}), a bridged leaf-spine ({@link org.inagg.perf.lab.LeafSpineFabric}) and a
 * routed fabric from a topology file of the planners ({@link org.inagg.perf.lab.TopologyFabric}), with plans deployed
 * on it as processes ({@link org.inagg.perf.lab.PlanOnFabric}: GRID's strategies, path-aware multicast's two jobs).
 * Needs root (or CAP_NET_ADMIN), iproute2 and ethtool.
 */
package org.inagg.perf.lab;
