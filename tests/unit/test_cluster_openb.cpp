// The Alibaba openb reader (models/cluster/openb_reader.hpp): the copies in
// scenarios/traces/alibaba-openb/ parse into the documented pools and pods, fast; corrupt rows
// are one line naming file:line:column and the column.
#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <set>
#include <string>

#include "models/cluster/openb_reader.hpp"

namespace gpumux::cluster {
namespace {

std::string trace(const std::string& name) {
  return std::string(GPUMUX_SOURCE_DIR) + "/scenarios/traces/alibaba-openb/" + name;
}

std::string pods_error(const std::string& csv) {
  try {
    parse_openb_pods(csv, "pods.csv");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string nodes_error(const std::string& csv) {
  try {
    parse_openb_nodes(csv, "nodes.csv");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

const char* kHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n";

TEST(ClusterOpenb, NodeListGroupsIntoPools) {
  const std::vector<NodePoolSpec> pools = load_openb_nodes(trace("openb_node_list_gpu_node.csv"));
  EXPECT_EQ(pools.size(), 15u);  // distinct (model, gpus, cpu, memory)
  int nodes = 0;
  int gpus = 0;
  std::set<std::string> models;
  for (const NodePoolSpec& p : pools) {
    EXPECT_EQ(static_cast<int>(p.node_names.size()), p.count);
    EXPECT_EQ(p.sharing.sharing, SharingKind::fractional);
    EXPECT_EQ(p.labels.at("model"), p.gpu_model);
    nodes += p.count;
    gpus += p.count * p.gpus_per_node;
    models.insert(p.gpu_model);
  }
  EXPECT_EQ(nodes, 1213);  // source: FGD data/README.md and the ATC'23 paper: 1,213 GPU nodes
  EXPECT_EQ(gpus, 6212);   // 24x1 + 518x2 + 54x4 + 617x8
  EXPECT_EQ(models, (std::set<std::string>{"A10", "G2", "G3", "P100", "T4", "V100M16", "V100M32"}));
  // The first row: openb-node-0000,64000,262144,2,P100.
  EXPECT_EQ(pools[0].node_names[0], "openb-node-0000");
  EXPECT_EQ(pools[0].gpu_model, "P100");
  EXPECT_EQ(pools[0].gpus_per_node, 2);
  EXPECT_EQ(pools[0].cpu_milli, 64000);
  EXPECT_EQ(pools[0].memory_bytes, 262144LL * 1024 * 1024);
  EXPECT_EQ(pools[0].name, "openb-P100-2x-0");
}

TEST(ClusterOpenb, DefaultPodsFollowTheMappingRule) {
  // Its speed is a benchmark's job (bench/bench_cluster_openb reports the parse), not a timed
  // test's: under parallel ctest on a loaded machine a wall-clock bound decides nothing.
  const std::vector<PodSpec> pods = load_openb_pods(trace("openb_pod_list_default.csv"));
  ASSERT_EQ(pods.size(), 8152u);
  std::map<std::string, int> classes;
  int cpu_only = 0;
  for (std::size_t i = 0; i < pods.size(); ++i) {
    const PodSpec& p = pods[i];
    ++classes[p.pod_class];
    if (i > 0) {
      EXPECT_LE(pods[i - 1].arrival, p.arrival);
    }
    if (p.gpu_resources.empty()) ++cpu_only;
    if (p.gpu_milli > 0) {
      EXPECT_LT(p.gpu_milli, kMilliPerGpu);
      EXPECT_EQ(p.gpu_resources.at("nvidia.com/gpu"), 1);  // a share of one GPU
      EXPECT_EQ(p.gpu_resources.size(), 1u);
    }
    ASSERT_TRUE(p.workload.duration.has_value()) << p.name;
    EXPECT_GE(*p.workload.duration, 0);
  }
  EXPECT_EQ(cpu_only, 1088);
  EXPECT_EQ(classes["0x0m"], 1088);
  EXPECT_EQ(classes["1x1000m"], 3911);
  EXPECT_EQ(classes["1x460m"], 128);
  // openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061
  const auto pod1 = std::find_if(pods.begin(), pods.end(),
                                 [](const PodSpec& p) { return p.name == "openb-pod-0001"; });
  ASSERT_NE(pod1, pods.end());
  EXPECT_EQ(pod1->cpu_milli, 6000);
  EXPECT_EQ(pod1->memory_bytes, 12288LL * 1024 * 1024);
  EXPECT_EQ(pod1->gpu_milli, 460);
  EXPECT_EQ(pod1->gpu_resources.at("nvidia.com/gpu"), 1);
  EXPECT_EQ(pod1->arrival, 427061 * kSecond);
  EXPECT_EQ(*pod1->workload.duration, (12902960 - 427061) * kSecond);
  EXPECT_TRUE(pod1->gpu_models.empty());
  EXPECT_EQ(pod1->where.line, 3);
  // A Pending pod deleted at its creation: duration 0, accepted.
  const auto pending = std::find_if(pods.begin(), pods.end(),
                                    [](const PodSpec& p) { return p.name == "openb-pod-7285"; });
  ASSERT_NE(pending, pods.end());
  EXPECT_EQ(*pending->workload.duration, 0);
}

TEST(ClusterOpenb, EveryVariantParses) {
  const std::map<std::string, std::size_t> rows = {{"openb_pod_list_gpushare40.csv", 8152},
                                                   {"openb_pod_list_gpushare100.csv", 8152},
                                                   {"openb_pod_list_gpuspec33.csv", 8152},
                                                   {"openb_pod_list_cpu050.csv", 7439},
                                                   {"openb_pod_list_multigpu50.csv", 9061}};
  for (const auto& [file, count] : rows) {
    EXPECT_EQ(load_openb_pods(trace(file)).size(), count) << file;
  }
  const std::vector<PodSpec> spec = load_openb_pods(trace("openb_pod_list_gpuspec33.csv"));
  const auto constrained = std::count_if(spec.begin(), spec.end(), [](const PodSpec& p) {
    return p.gpu_models == std::vector<std::string>{"V100M16", "V100M32"};
  });
  EXPECT_EQ(constrained, 141);
  // multigpu50 has no times: every pod arrives at 0 in file order and never ends.
  const std::vector<PodSpec> multi = load_openb_pods(trace("openb_pod_list_multigpu50.csv"));
  EXPECT_EQ(multi.front().name, "openb-pod-0000");
  EXPECT_TRUE(std::all_of(multi.begin(), multi.end(), [](const PodSpec& p) {
    return p.arrival == 0 && !p.workload.duration && !p.workload.tenant;
  }));
  EXPECT_EQ(std::count_if(multi.begin(), multi.end(),
                          [](const PodSpec& p) {
                            return p.gpu_resources.count("nvidia.com/gpu") &&
                                   p.gpu_resources.at("nvidia.com/gpu") == 8;
                          }),
            556);
}

TEST(ClusterOpenb, CorruptRows) {
  const std::string h = kHeader;
  EXPECT_EQ(
      pods_error(h + "p0,1000,1024,1,500,,LS,Running,0,10,0\np1,x,1024,0,0,,LS,Running,0,1,0\n"),
      "pods.csv:3:4: cpu_milli: expected an integer, got 'x'");
  EXPECT_EQ(pods_error(h + "p0,1000,1024,2,500,,LS,Running,0,10,0\n"),
            "pods.csv:2:16: gpu_milli: num_gpu 2 with gpu_milli 500: a share (1-999) is for one "
            "GPU, whole GPUs have gpu_milli 1000");
  EXPECT_EQ(pods_error(h + "p0,1000,1024,0,300,,LS,Running,0,10,0\n"),
            "pods.csv:2:16: gpu_milli: a pod with num_gpu 0 asks for no GPU share, got gpu_milli "
            "300");
  EXPECT_EQ(pods_error(h + "p0,1000,1024,1,0,,LS,Running,0,10,0\n"),
            "pods.csv:2:16: gpu_milli: num_gpu 1 with gpu_milli 0: a share (1-999) is for one "
            "GPU, whole GPUs have gpu_milli 1000");
  EXPECT_EQ(pods_error(h + "p0,1000,1024,1,1000,,LS,Running,50,10,50\n"),
            "pods.csv:2:36: deletion_time: deletion_time 10 is before creation_time 50");
  EXPECT_EQ(pods_error(h + "p0,1000,-1,1,1000,,LS,Running,0,10,0\n"),
            "pods.csv:2:9: memory_mib: must be from 0 to 1000000000, got -1");
  EXPECT_EQ(pods_error(h + "p0,1000,1024,1,1000\n"), "pods.csv:2:1: 5 fields, the header has 11");
  EXPECT_EQ(
      pods_error(h + "p0,1000,1024,1,1000,,LS,Running,0,10,0\np0,1,1,0,0,,LS,Running,0,1,0\n"),
      "pods.csv:3:1: name: pod 'p0' listed twice (also line 2)");
  EXPECT_EQ(pods_error("name,cpu_milli,memory_mib,num_gpu\np0,1,1,0\n"),
            "pods.csv:1:1: gpu_milli: missing column 'gpu_milli' (header: name, cpu_milli, "
            "memory_mib, num_gpu)");
  EXPECT_EQ(pods_error(h), "pods.csv:1:1: no pods (the file has only a header)");
  EXPECT_EQ(pods_error(""), "pods.csv: empty file (expected a header line)");
  EXPECT_EQ(pods_error(h + "\"p0\",1000,1024,1,1000,,LS,Running,0,10,0\n"),
            "pods.csv:2:1: quoted fields are not part of the openb format");
  EXPECT_EQ(pods_error(h + "p0,1000,1024,1,1000,,LS,Running,0,10,0\r\n"), "");  // CRLF is fine
  EXPECT_EQ(nodes_error("sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,\n"),
            "nodes.csv:2:19: model: a GPU node needs a model");
  EXPECT_EQ(nodes_error("sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2.5,T4\n"),
            "nodes.csv:2:17: gpu: expected an integer, got '2.5'");
  EXPECT_EQ(nodes_error("sn,cpu_milli,memory_mib,gpu,model\nn0,1,1,1,T4\nn0,1,1,1,T4\n"),
            "nodes.csv:3:1: sn: node 'n0' listed twice (also line 2)");
}

TEST(ClusterOpenb, MissingFileNamesWhereItWasReferenced) {
  try {
    load_openb_pods(trace("no-such.csv"), SourceLocation{"s.yaml", 4, 12, "cluster.openb.pods"});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("s.yaml:4:12: cluster.openb.pods: cannot open openb pod "
                                          "list ",
                                          0),
              0u)
        << e.what();
  }
}

}  // namespace
}  // namespace gpumux::cluster
