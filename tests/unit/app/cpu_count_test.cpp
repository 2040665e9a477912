// cgroup_cpu_quota() / usable_cpus(): the --threads default from fake cgroup v1 and v2 trees.
#include "ratelimitd/app/cpu_count.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace ratelimitd::app {
namespace {

namespace fs = std::filesystem;

class CgroupTree : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/ratelimitd-cgroup-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        root_ = tmpl;
    }
    void TearDown() override { fs::remove_all(root_); }

    void write(const std::string& relative, const std::string& text) const {
        const auto file = root_ / relative;
        fs::create_directories(file.parent_path());
        std::ofstream(file) << text << "\n";
    }

    fs::path root_;
};

TEST_F(CgroupTree, V2HalfACpuIsOneThreadOnA64CoreHost) {
    write("kubepods/pod1/ctr/cpu.max", "50000 100000");
    const auto quota = cgroup_cpu_quota(root_, "0::/kubepods/pod1/ctr\n");
    ASSERT_TRUE(quota.has_value());
    EXPECT_DOUBLE_EQ(*quota, 0.5);
    EXPECT_EQ(usable_cpus(64, quota), 1);
}

TEST_F(CgroupTree, V2MaxMeansNoQuota) {
    write("cpu.max", "max 100000");
    EXPECT_FALSE(cgroup_cpu_quota(root_, "0::/\n").has_value());
    EXPECT_EQ(usable_cpus(8, std::nullopt), 8);
}

TEST_F(CgroupTree, V2AncestorQuotaBelowTheOwnOneWins) {
    write("pod/cpu.max", "150000 100000");      // the pod: 1.5 CPUs
    write("pod/ctr/cpu.max", "max 100000");     // the container: no limit of its own
    EXPECT_EQ(usable_cpus(64, cgroup_cpu_quota(root_, "0::/pod/ctr\n")), 2);
}

TEST_F(CgroupTree, V2ContainerSeesItsOwnCgroupAsTheRoot) {
    // With a cgroup namespace the path may name a cgroup that is not under the mount.
    write("cpu.max", "200000 100000");
    EXPECT_EQ(usable_cpus(64, cgroup_cpu_quota(root_, "0::/not/mounted/here\n")), 2);
}

TEST_F(CgroupTree, HybridHostReadsTheUnifiedMount) {
    write("unified/svc/cpu.max", "300000 100000");
    EXPECT_EQ(usable_cpus(64, cgroup_cpu_quota(root_, "1:cpu:/\n0::/svc\n")), 3);
}

TEST_F(CgroupTree, V1CfsQuotaUnderTheJoinedControllerDirectory) {
    write("cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "250000");
    write("cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000");
    const auto quota = cgroup_cpu_quota(root_, "4:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n");
    ASSERT_TRUE(quota.has_value());
    EXPECT_DOUBLE_EQ(*quota, 2.5);
    EXPECT_EQ(usable_cpus(64, quota), 3);
}

TEST_F(CgroupTree, V1MinusOneMeansNoQuota) {
    write("cpu/cpu.cfs_quota_us", "-1");
    write("cpu/cpu.cfs_period_us", "100000");
    EXPECT_FALSE(cgroup_cpu_quota(root_, "1:cpu:/\n").has_value());
}

TEST_F(CgroupTree, V1ControllerWithoutCpuIsIgnored) {
    write("cpuacct/cpu.cfs_quota_us", "50000");
    write("cpuacct/cpu.cfs_period_us", "100000");
    EXPECT_FALSE(cgroup_cpu_quota(root_, "2:cpuacct:/\n").has_value());
}

TEST_F(CgroupTree, UnreadableOrMalformedFilesGiveNoQuota) {
    write("cpu.max", "fifty 100000");
    EXPECT_FALSE(cgroup_cpu_quota(root_, "0::/\n").has_value());
    EXPECT_FALSE(cgroup_cpu_quota(root_ / "absent", "0::/\n").has_value());
    EXPECT_FALSE(cgroup_cpu_quota(root_, "garbage\n").has_value());
}

TEST(UsableCpus, AffinityCapsAQuotaAboveIt) {
    EXPECT_EQ(usable_cpus(2, 16.0), 2);
    EXPECT_EQ(usable_cpus(0, std::nullopt), 1);
    EXPECT_EQ(usable_cpus(4, 0.01), 1);
}

TEST(AvailableCpus, IsAtLeastOneAndAtMostTheHost) {
    const int cpus = available_cpus();
    EXPECT_GE(cpus, 1);
    EXPECT_LE(cpus, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

}  // namespace
}  // namespace ratelimitd::app
