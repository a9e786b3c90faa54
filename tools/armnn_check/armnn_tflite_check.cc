// armnn_tflite_check: an independent reader for the .tflite files sramplan writes (`plan
// --tflite-out`). Arm NN's TfLite parser (Debian's libarmnntfliteparser) parses each file given; with
// two files it also runs both on Arm NN's reference CPU backend with the same deterministic input
// and compares every output byte for byte, so a file written with an offline memory plan is shown to
// be the same network as the original to a reader that shares no code with sramplan.
//
//   armnn_tflite_check ORIGINAL.tflite [WRITTEN.tflite]
//
// Exit codes: 0 every file parsed (and, with two files, both ran with identical outputs, or the
// backend cannot run the network: "not run" and the reason); 1 bad usage or a file Arm NN cannot
// parse; 3 the two files' outputs differ.
//
// Arm NN reports errors with exceptions; they are caught here, at the boundary, and printed.
#include <armnn/ArmNN.hpp>
#include <armnnTfLiteParser/ITfLiteParser.hpp>

#include <cstdint>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

namespace {

struct Parsed {
  armnn::INetworkPtr net{nullptr, [](armnn::INetwork*) {}};
  std::vector<armnnTfLiteParser::BindingPointInfo> inputs, outputs;
  std::vector<std::string> input_names, output_names;
};

// Parses `path`; throws what Arm NN throws.
Parsed Parse(const std::string& path) {
  auto parser = armnnTfLiteParser::ITfLiteParser::Create();
  Parsed p;
  p.net = parser->CreateNetworkFromBinaryFile(path.c_str());
  p.input_names = parser->GetSubgraphInputTensorNames(0);
  p.output_names = parser->GetSubgraphOutputTensorNames(0);
  for (const auto& n : p.input_names) p.inputs.push_back(parser->GetNetworkInputBindingInfo(0, n));
  for (const auto& n : p.output_names) p.outputs.push_back(parser->GetNetworkOutputBindingInfo(0, n));
  return p;
}

// Runs the network on CpuRef with a deterministic input (an LCG's bytes); returns every output's bytes.
std::vector<std::vector<uint8_t>> Run(Parsed& p) {
  armnn::IRuntime::CreationOptions options;
  armnn::IRuntimePtr runtime = armnn::IRuntime::Create(options);
  armnn::IOptimizedNetworkPtr opt = armnn::Optimize(*p.net, {armnn::Compute::CpuRef}, runtime->GetDeviceSpec());
  if (!opt) throw armnn::Exception("Arm NN could not optimise the network for CpuRef");
  armnn::NetworkId id;
  std::string message;
  if (runtime->LoadNetwork(id, std::move(opt), message) != armnn::Status::Success)
    throw armnn::Exception("LoadNetwork failed: " + message);
  std::vector<std::vector<uint8_t>> in(p.inputs.size()), out(p.outputs.size());
  uint32_t state = 20261124u;
  armnn::InputTensors input_tensors;
  for (size_t k = 0; k < p.inputs.size(); ++k) {
    in[k].resize(p.inputs[k].second.GetNumBytes());
    for (auto& b : in[k]) {
      state = state * 1664525u + 1013904223u;
      b = static_cast<uint8_t>(state >> 24);
    }
    input_tensors.push_back({p.inputs[k].first, armnn::ConstTensor(p.inputs[k].second, in[k].data())});
  }
  armnn::OutputTensors output_tensors;
  for (size_t k = 0; k < p.outputs.size(); ++k) {
    out[k].resize(p.outputs[k].second.GetNumBytes());
    output_tensors.push_back({p.outputs[k].first, armnn::Tensor(p.outputs[k].second, out[k].data())});
  }
  if (runtime->EnqueueWorkload(id, input_tensors, output_tensors) != armnn::Status::Success)
    throw armnn::Exception("EnqueueWorkload failed");
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::cerr << "usage: armnn_tflite_check ORIGINAL.tflite [WRITTEN.tflite]\n";
    return 1;
  }
  armnn::ConfigureLogging(false, false, armnn::LogSeverity::Fatal);
  std::vector<Parsed> parsed;
  for (int i = 1; i < argc; ++i) {
    try {
      parsed.push_back(Parse(argv[i]));
    } catch (const std::exception& e) {
      std::cout << "armnn: " << argv[i] << ": parse FAILED: " << e.what() << "\n";
      return 1;
    }
    std::cout << "armnn: " << argv[i] << ": parsed (" << parsed.back().inputs.size() << " input(s), "
              << parsed.back().outputs.size() << " output(s))\n";
  }
  if (parsed.size() < 2) return 0;
  if (parsed[0].input_names != parsed[1].input_names || parsed[0].output_names != parsed[1].output_names) {
    std::cout << "armnn: the two files have different input or output tensors\n";
    return 3;
  }
  std::vector<std::vector<uint8_t>> a, b;
  try {
    a = Run(parsed[0]);
  } catch (const std::exception& e) {
    std::cout << "armnn: not run: the CpuRef backend cannot run " << argv[1] << ": " << e.what() << "\n";
    return 0;
  }
  try {
    b = Run(parsed[1]);
  } catch (const std::exception& e) {
    std::cout << "armnn: " << argv[2] << ": run FAILED although the original ran: " << e.what() << "\n";
    return 3;
  }
  size_t bytes = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    if (a[k] != b[k]) {
      std::cout << "armnn: output '" << parsed[0].output_names[k] << "' differs between the two files\n";
      return 3;
    }
    bytes += a[k].size();
  }
  std::cout << "armnn: ran both on CpuRef: " << bytes << " output bytes identical\n";
  return 0;
}
