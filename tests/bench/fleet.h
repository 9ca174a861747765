#pragma once
// The benchmark fleet: a generated program of many envs, as a platform team's would look.

#include <string>

namespace mlenv::bench {

// `envs` envs over `clusters` clusters (each with four SR-IOV RDMA rails and per-pod storage), one
// image per env extending the stdlib's, every env multi-node with three exposed services.
inline std::string fleet(int envs, int clusters) {
  std::string out = "import \"std/profiles/h100\"\nimport \"std/images/pytorch\"\n\n";
  for (int i = 0; i < clusters; ++i) {
    std::string c = "c" + std::to_string(i);
    out += "cluster " + c + " extends h100.node4 {\n  api = \"api." + c +
           ".example.com\"\n  namespace = \"ns-" + c + "\"\n  nodes = [\"" + c + "-a\", \"" + c +
           "-b\"]\n  storage {\n    mode = per_pod\n    class = \"ceph-rbd\"\n  }\n"
           "  network {\n    rdma {\n      rails = [\n";
    for (int r = 0; r < 4; ++r) {
      std::string rail = std::to_string(r + 1);
      out += "        { device = \"mlx5_" + std::to_string(r + 2) + "\", interface = \"net" + rail +
             "\", link_layer = ethernet, network = \"" + c + "-rail" + rail +
             "\", resource = \"openshift.io/" + c + "rail" + rail +
             "\",\n          ipam = { type = whereabouts, range = \"10." + rail + "." +
             std::to_string(i % 256) + ".0/24\" } },\n";
    }
    out += "      ]\n      gid_index = 3\n    }\n  }\n}\n\n";
  }
  for (int i = 0; i < envs; ++i) {
    std::string e = "e" + std::to_string(i), c = "c" + std::to_string(i % clusters);
    out += "image " + e + " extends pytorch.pytorch29 {\n  pip += [\"pkg" + std::to_string(i) +
           "\"]\n}\n\n";
    out += "env " + e + " {\n  cluster = " + c + "\n  image = " + e +
           "\n  nodes = 2\n  network = rdma\n  services = [vscode, jupyter, tensorboard]\n}\n\n";
  }
  return out;
}

}  // namespace mlenv::bench
