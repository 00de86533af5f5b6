// Runs the kernels of gpu/src/main/cuda/inagg_kernels.cu on the CPU (see cuda_emulation.h), one launch per line of a
// command file, with the grid, block and arguments CudaReducer would pass to cuLaunchKernel:
//
//   kernel_driver COMMANDS            one launch per line:  KERNEL GRID BLOCK ARG...
//
// ARG, in the kernel's parameter order (checked against the kernel's C signature, as the driver API lays out
// kernelParams by the PTX .param list):
//   in:PATH              device buffer holding the file's bytes (raw little-endian int32/float32)
//   out:PATH:N           device buffer of N 4-byte elements, written to PATH after the launch
//   ptrs:PATH,PATH,...   device array of device pointers to input buffers (the k-way kernels' `sources`)
//   i32:V  i64:V         int / long long by value
//
// Every buffer sits between guard words and output buffers start filled with a NaN pattern, so a write out of bounds,
// a write to an input, or an element the kernel never writes is reported (exit status 1). INAGG_EMU_GUARD=0 drops the
// guard words (for runs under -fsanitize=address, which then sees every out-of-bounds access itself). A launch that
// does not finish within INAGG_EMU_TIMEOUT seconds (default 120: a barrier some thread never reaches) aborts.
#include <algorithm>
#include <cinttypes>
#include <csignal>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <unistd.h>

#include "cuda_emulation.h"

extern "C" {
void inagg_block_exponents(const float* __restrict__ x, long long n, int blockSize, int* __restrict__ exponents);
void inagg_max_k(const int* const* __restrict__ sources, int k, long long n, int* __restrict__ out);
void inagg_quantize(const float* __restrict__ x, long long n, int blockSize, const int* __restrict__ exponents,
    int headroom, int bigEndian, int* __restrict__ lanes);
void inagg_dequantize(const int* __restrict__ lanes, long long n, int blockSize, const int* __restrict__ exponents,
    int headroom, int bigEndian, float* __restrict__ x);
void inagg_sum_k_f32(const float* const* __restrict__ sources, int k, long long n, float* __restrict__ out);
void inagg_sum_k_s32(const int* const* __restrict__ sources, int k, long long n, int* __restrict__ out);
void inagg_reduce_quantize(const float* const* __restrict__ sources, int k, long long n, int blockSize,
    const int* __restrict__ exponents, int headroom, int bigEndian, int* __restrict__ lanes);
}

namespace
{
constexpr uint32_t kGuardWord = 0xCAFEBABEu;
constexpr uint32_t kUnwritten = 0x7FA5A5A5u; // a NaN no kernel produces
size_t guardWords = 64;

[[noreturn]] void die(const std::string& message)
{
    std::cerr << "kernel_driver: " << message << std::endl;
    std::exit(1);
}

// A device allocation: `words` 4-byte elements between guard words.
struct Buffer
{
    std::string path;
    bool output = false;
    std::vector<uint32_t> storage;
    std::vector<uint32_t> original; // inputs: the bytes read, to detect writes
    size_t words = 0;

    uint32_t* data()
    {
        return storage.data() + guardWords;
    }

    void allocate(size_t count, uint32_t fill)
    {
        words = count;
        storage.assign(count + 2 * guardWords, kGuardWord);
        std::fill(storage.begin() + static_cast<long>(guardWords),
            storage.begin() + static_cast<long>(guardWords + count), fill);
    }

    void check(const std::string& launch) const
    {
        for (size_t i = 0; i < guardWords; i++)
        {
            if (storage[i] != kGuardWord || storage[guardWords + words + i] != kGuardWord)
            {
                die(launch + ": write out of bounds of " + path);
            }
        }
        if (!output && !std::equal(original.begin(), original.end(), storage.begin() + static_cast<long>(guardWords)))
        {
            die(launch + ": the kernel wrote to its input " + path);
        }
    }
};

Buffer readInput(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
    {
        die("cannot read " + path);
    }
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.size() % 4 != 0)
    {
        die(path + ": size is not a multiple of 4");
    }
    Buffer buffer;
    buffer.path = path;
    buffer.allocate(bytes.size() / 4, 0);
    if (!bytes.empty())
    {
        std::memcpy(buffer.data(), bytes.data(), bytes.size());
    }
    buffer.original.assign(buffer.data(), buffer.data() + buffer.words);
    return buffer;
}

enum class Kind
{
    kIn,
    kOut,
    kPointers,
    kI32,
    kI64
};

struct Arg
{
    Kind kind;
    std::vector<Buffer*> buffers; // kIn/kOut: one; kPointers: the pointed-to buffers
    std::vector<const void*> pointerArray;
    Buffer pointerArrayGuard;     // guards around the pointer array (its words hold the pointers' bytes)
    long long value = 0;

    const void* pointer()
    {
        return kind == Kind::kPointers ? static_cast<const void*>(pointerArrayGuard.data())
                                       : static_cast<const void*>(buffers.at(0)->data());
    }
};

const char* name(Kind kind)
{
    switch (kind)
    {
    case Kind::kIn: return "in (device pointer to input)";
    case Kind::kOut: return "out (device pointer to output)";
    case Kind::kPointers: return "ptrs (device pointer to device pointers)";
    case Kind::kI32: return "i32";
    case Kind::kI64: return "i64";
    }
    return "?";
}

void expect(const std::string& kernel, std::vector<Arg>& args, std::initializer_list<Kind> kinds)
{
    if (args.size() != kinds.size())
    {
        die(kernel + " takes " + std::to_string(kinds.size()) + " parameters, got " + std::to_string(args.size()));
    }
    size_t i = 0;
    for (const Kind kind : kinds)
    {
        if (args[i].kind != kind)
        {
            die(kernel + " parameter " + std::to_string(i) + " must be " + name(kind) + ", got " + name(args[i].kind));
        }
        i++;
    }
}

template <class T>
T* as(Arg& arg)
{
    return reinterpret_cast<T*>(const_cast<void*>(arg.pointer()));
}

int i32(const Arg& arg)
{
    return static_cast<int>(arg.value);
}

void run(const std::string& line, std::vector<std::unique_ptr<Buffer>>& keep)
{
    std::istringstream tokens(line);
    std::string kernel;
    unsigned grid = 0;
    unsigned block = 0;
    if (!(tokens >> kernel >> grid >> block))
    {
        die("bad line: " + line);
    }
    std::vector<Arg> args;
    std::vector<Buffer*> outputs;
    std::vector<Buffer*> all;
    std::string token;
    while (tokens >> token)
    {
        Arg arg {};
        if (token.rfind("in:", 0) == 0)
        {
            arg.kind = Kind::kIn;
            keep.push_back(std::make_unique<Buffer>(readInput(token.substr(3))));
            arg.buffers.push_back(keep.back().get());
        }
        else if (token.rfind("out:", 0) == 0)
        {
            arg.kind = Kind::kOut;
            const size_t colon = token.rfind(':');
            auto buffer = std::make_unique<Buffer>();
            buffer->path = token.substr(4, colon - 4);
            buffer->output = true;
            buffer->allocate(std::stoull(token.substr(colon + 1)), kUnwritten);
            keep.push_back(std::move(buffer));
            arg.buffers.push_back(keep.back().get());
            outputs.push_back(keep.back().get());
        }
        else if (token.rfind("ptrs:", 0) == 0)
        {
            arg.kind = Kind::kPointers;
            std::istringstream paths(token.substr(5));
            std::string path;
            while (std::getline(paths, path, ','))
            {
                keep.push_back(std::make_unique<Buffer>(readInput(path)));
                arg.buffers.push_back(keep.back().get());
            }
        }
        else if (token.rfind("i32:", 0) == 0)
        {
            arg.kind = Kind::kI32;
            arg.value = std::stoll(token.substr(4));
            if (arg.value < INT_MIN || arg.value > INT_MAX)
            {
                die("i32 out of range: " + token);
            }
        }
        else if (token.rfind("i64:", 0) == 0)
        {
            arg.kind = Kind::kI64;
            arg.value = std::stoll(token.substr(4));
        }
        else
        {
            die("bad argument " + token + " in: " + line);
        }
        args.push_back(std::move(arg));
    }
    // The device arrays of device pointers, guarded like any other allocation.
    for (Arg& arg : args)
    {
        if (arg.kind == Kind::kPointers)
        {
            const size_t words = arg.buffers.size() * sizeof(void*) / 4;
            arg.pointerArrayGuard.path = "pointer array";
            arg.pointerArrayGuard.allocate(words, 0);
            for (size_t j = 0; j < arg.buffers.size(); j++)
            {
                const void* p = arg.buffers[j]->data();
                std::memcpy(reinterpret_cast<char*>(arg.pointerArrayGuard.data()) + j * sizeof(void*), &p, sizeof p);
            }
            arg.pointerArrayGuard.original.assign(
                arg.pointerArrayGuard.data(), arg.pointerArrayGuard.data() + words);
            all.push_back(&arg.pointerArrayGuard);
        }
        for (Buffer* buffer : arg.buffers)
        {
            all.push_back(buffer);
        }
    }

    using cuda_emulation::emulateLaunch;
    const dim3 g {grid, 1, 1};
    const dim3 b {block, 1, 1};
    using K = Kind;
    if (kernel == "inagg_block_exponents")
    {
        expect(kernel, args, {K::kIn, K::kI64, K::kI32, K::kOut});
        emulateLaunch<true>(g, b, [&] {
            inagg_block_exponents(as<const float>(args[0]), args[1].value, i32(args[2]), as<int>(args[3]));
        });
    }
    else if (kernel == "inagg_max_k")
    {
        expect(kernel, args, {K::kPointers, K::kI32, K::kI64, K::kOut});
        emulateLaunch<false>(g, b, [&] {
            inagg_max_k(as<const int* const>(args[0]), i32(args[1]), args[2].value, as<int>(args[3]));
        });
    }
    else if (kernel == "inagg_quantize")
    {
        expect(kernel, args, {K::kIn, K::kI64, K::kI32, K::kIn, K::kI32, K::kI32, K::kOut});
        emulateLaunch<false>(g, b, [&] {
            inagg_quantize(as<const float>(args[0]), args[1].value, i32(args[2]), as<const int>(args[3]), i32(args[4]),
                i32(args[5]), as<int>(args[6]));
        });
    }
    else if (kernel == "inagg_dequantize")
    {
        expect(kernel, args, {K::kIn, K::kI64, K::kI32, K::kIn, K::kI32, K::kI32, K::kOut});
        emulateLaunch<false>(g, b, [&] {
            inagg_dequantize(as<const int>(args[0]), args[1].value, i32(args[2]), as<const int>(args[3]),
                i32(args[4]), i32(args[5]), as<float>(args[6]));
        });
    }
    else if (kernel == "inagg_sum_k_f32")
    {
        expect(kernel, args, {K::kPointers, K::kI32, K::kI64, K::kOut});
        emulateLaunch<false>(g, b, [&] {
            inagg_sum_k_f32(as<const float* const>(args[0]), i32(args[1]), args[2].value, as<float>(args[3]));
        });
    }
    else if (kernel == "inagg_sum_k_s32")
    {
        expect(kernel, args, {K::kPointers, K::kI32, K::kI64, K::kOut});
        emulateLaunch<false>(g, b, [&] {
            inagg_sum_k_s32(as<const int* const>(args[0]), i32(args[1]), args[2].value, as<int>(args[3]));
        });
    }
    else if (kernel == "inagg_reduce_quantize")
    {
        expect(kernel, args, {K::kPointers, K::kI32, K::kI64, K::kI32, K::kIn, K::kI32, K::kI32, K::kOut});
        emulateLaunch<false>(g, b, [&] {
            inagg_reduce_quantize(as<const float* const>(args[0]), i32(args[1]), args[2].value, i32(args[3]),
                as<const int>(args[4]), i32(args[5]), i32(args[6]), as<int>(args[7]));
        });
    }
    else
    {
        die("unknown kernel " + kernel);
    }

    for (const Buffer* buffer : all)
    {
        buffer->check(line);
    }
    for (Buffer* buffer : outputs)
    {
        std::ofstream out(buffer->path, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(buffer->data()), static_cast<std::streamsize>(buffer->words * 4));
        if (!out)
        {
            die("cannot write " + buffer->path);
        }
    }
}
} // namespace

int main(int argc, char** argv)
{
    if (argc != 2)
    {
        std::cerr << "usage: kernel_driver COMMANDS" << std::endl;
        return 2;
    }
    if (const char* guard = std::getenv("INAGG_EMU_GUARD"))
    {
        guardWords = std::stoul(guard);
    }
    const char* timeout = std::getenv("INAGG_EMU_TIMEOUT");
    alarm(timeout != nullptr ? static_cast<unsigned>(std::stoul(timeout)) : 120u); // SIGALRM ends a hung launch
    std::ifstream commands(argv[1]);
    if (!commands)
    {
        die(std::string("cannot read ") + argv[1]);
    }
    std::string line;
    long launches = 0;
    while (std::getline(commands, line))
    {
        if (line.empty() || line[0] == '#')
        {
            continue;
        }
        std::vector<std::unique_ptr<Buffer>> keep;
        run(line, keep);
        launches++;
    }
    std::cout << "kernel_driver: " << launches << " launches" << std::endl;
    return 0;
}
