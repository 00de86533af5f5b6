/**
 * What the worker, switch and local runs share beyond their options: synthetic gradients and their error bound
 * ({@code SyntheticGradients}), the heap a tensor needs ({@code TensorMemory}), the range checks of numeric options
 * ({@code CliNumbers}), a progress bar, a profiling window and the process CPU clock whose lines {@code bench-peers}
 * reads ({@code ProcessCpu}). The commands of {@code bin/inagg} that parse options
 * and start these processes are in module {@code cli}, same package; the picocli root is
 * {@code org.inagg.perf.cli.InaggCli}.
 */
package org.inagg.services.cli;
