/* One rank of an MPI_Allreduce benchmark (float32 sum, in place), started by `inagg bench-peers` through mpirun.
 * Arguments: ELEMENTS ITERATIONS WARMUP. Rank 0 prints "elements/s VALUE" (the slowest rank's time decides), "p50 ms
 * VALUE" (the median call, each call's time the slowest rank's), "cpu ms VALUE" (all ranks' process CPU time over the
 * timed calls, summed, per call) and, once
 * a fresh tensor of rank + 1 summed to W(W+1)/2 on every rank, "result ok". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* This process's CPU time (every thread), in seconds. */
static double process_cpu_seconds(void)
{
    struct timespec now;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now) != 0)
    {
        perror("mpi_allreduce: clock_gettime(CLOCK_PROCESS_CPUTIME_ID)");
        MPI_Abort(MPI_COMM_WORLD, 4);
    }
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc < 4)
    {
        fprintf(stderr, "usage: mpi_allreduce ELEMENTS ITERATIONS WARMUP\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long elements = atol(argv[1]);
    int iterations = atoi(argv[2]);
    int warmup = atoi(argv[3]);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    float *tensor = malloc(sizeof(float) * (size_t)elements);
    if (tensor == NULL)
    {
        fprintf(stderr, "mpi_allreduce: cannot allocate %ld floats\n", elements);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    for (long i = 0; i < elements; i++)
    {
        tensor[i] = (float)(rank + 1);
    }
    for (int i = 0; i < warmup; i++)
    {
        MPI_Allreduce(MPI_IN_PLACE, tensor, (int)elements, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    double *calls = calloc((size_t)(iterations > 0 ? iterations : 1), sizeof(double));
    if (calls == NULL)
    {
        fprintf(stderr, "mpi_allreduce: cannot allocate %d call times\n", iterations);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double cpu_start = process_cpu_seconds();
    double start = MPI_Wtime();
    for (int i = 0; i < iterations; i++)
    {
        double began = MPI_Wtime();
        MPI_Allreduce(MPI_IN_PLACE, tensor, (int)elements, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        calls[i] = MPI_Wtime() - began;
    }
    double elapsed = MPI_Wtime() - start;
    double cpu = process_cpu_seconds() - cpu_start, cpu_all = 0;
    MPI_Reduce(&cpu, &cpu_all, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, calls, iterations, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    qsort(calls, (size_t)iterations, sizeof(double), compare_doubles);
    double p50 = iterations % 2 == 1 ? calls[iterations / 2] : (calls[iterations / 2 - 1] + calls[iterations / 2]) / 2;
    double slowest;
    MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    int world;
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    for (long i = 0; i < elements; i++)
    {
        tensor[i] = (float)(rank + 1);
    }
    MPI_Allreduce(MPI_IN_PLACE, tensor, (int)elements, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    long wrong = 0, wrongAll = 0;
    for (long i = 0; i < elements; i++)
    {
        wrong += tensor[i] != (float)(world * (world + 1) / 2);
    }
    MPI_Reduce(&wrong, &wrongAll, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
    {
        printf("elements/s %.6e\n", (double)elements * iterations / slowest);
        printf("p50 ms %.3f\n", p50 * 1e3);
        printf("cpu ms %.3f\n", cpu_all / iterations * 1e3);
        if (wrongAll == 0)
        {
            printf("result ok\n");
        }
        else
        {
            printf("result WRONG in %ld elements\n", wrongAll);
        }
        fflush(stdout);
    }
    free(calls);
    free(tensor);
    MPI_Finalize();
    return 0;
}
