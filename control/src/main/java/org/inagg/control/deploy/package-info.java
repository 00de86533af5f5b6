/**
 * A plan on the datapath: {@code PlanDeployment} turns a plan file into switch job tables with two-level aggregation
 * (each switch sums the workers the plan gives it and sends the sum up to the PS), parameter-server jobs and each
 * worker's shards of the model (one job per PS); {@code InProcessPlanCluster} runs all of it in one process, next to
 * the flat single-switch reference it must match bit for bit.
 */
package org.inagg.control.deploy;
