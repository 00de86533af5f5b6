/**
 * Launcher conventions: {@link org.inagg.api.launch.LaunchEnvironment} reads a worker's rank and world size from the
 * variables torchrun, Open MPI, PMI (MPICH, Intel MPI) and Slurm set ({@link org.inagg.api.launch.Launcher}), into a
 * {@link org.inagg.api.launch.Launch} that explicit values may override.
 */
package org.inagg.api.launch;
