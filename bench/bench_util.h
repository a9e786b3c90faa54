// Shared by the benchmarks: a description of the machine they ran on.
#pragma once

#include <sys/utsname.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <thread>

namespace sramplan::bench {

inline std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown cpu";
}

inline unsigned Cores() { return std::max(1u, static_cast<unsigned>(std::thread::hardware_concurrency())); }

// "CPU model, N cores, Linux release".
inline std::string Machine() {
  struct utsname u;
  uname(&u);
  return CpuModel() + ", " + std::to_string(Cores()) + " cores, " + u.sysname + " " + u.release;
}

// The 1, 5 and 15 minute load averages (how busy the machine was).
inline std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

}  // namespace sramplan::bench
