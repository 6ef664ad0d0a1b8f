// Continuous batching's policy alone (models/workload/batching_policy.hpp), driven through a fake
// serving engine with a byte budget instead of a simulated GPU: the admission's closed forms
// (bytes, KV blocks, the token cap), the solo latency's iteration counts and sums, and on random
// instances of every scheduler the invariants of each iteration (never past max_batch, the token
// budget or the memory; vLLM and Sarathi preempt the newest request; Sarathi's chunks sum to the
// prompt; every request completes with its tokens or is rejected).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "models/workload/batching_policy.hpp"

namespace gpumux {
namespace {

struct FakeSeq {
  std::uint64_t id = 0;
  std::int64_t input_tokens = 0, output_tokens = 0, tokens_done = 0, memory = 0;
  std::int64_t prefill_goal = 0, prefilled = 0, kv_tokens = 0, chunk = 0;
  bool decoding = false;
  std::uint64_t admitted_at = 0;  // the engine's admission counter when it was (last) admitted
  std::int64_t chunks_this_admission = 0;  // prompt tokens computed since it was (re)admitted
};

/// A serving engine of `capacity` bytes: what the policy asks (ServingEngine) plus records of
/// what it did, for the assertions.
struct FakeEngine {
  std::int64_t capacity = 0, used = 0;
  std::deque<std::unique_ptr<FakeSeq>> queue;
  std::vector<std::unique_ptr<FakeSeq>> running_;
  std::vector<std::unique_ptr<FakeSeq>> completed, failed;
  std::uint64_t admissions = 0;
  int preemptions = 0;
  bool preempted_other_than_newest = false;

  bool queue_empty() const { return queue.empty(); }
  const FakeSeq& queue_front() const { return *queue.front(); }
  int in_flight() const { return static_cast<int>(running_.size()); }
  std::vector<std::unique_ptr<FakeSeq>>& running() { return running_; }
  bool try_reserve(std::int64_t bytes, std::string& why) {
    if (bytes <= 0) return true;
    if (bytes > capacity - used) {
      why = "full";
      return false;
    }
    used += bytes;
    return true;
  }
  FakeSeq& admit_front() {
    running_.push_back(std::move(queue.front()));
    queue.pop_front();
    running_.back()->admitted_at = ++admissions;
    running_.back()->chunks_this_admission = 0;
    return *running_.back();
  }
  void reject_front(bool, const std::string&) {
    failed.push_back(std::move(queue.front()));
    queue.pop_front();
  }
  void preempt(std::size_t i) {
    // The newest admitted request is the one with the largest admission counter.
    for (const auto& r : running_) {
      if (r->admitted_at > running_[i]->admitted_at) preempted_other_than_newest = true;
    }
    std::unique_ptr<FakeSeq> r = std::move(running_[i]);
    running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(i));
    used -= r->memory;
    r->memory = r->kv_tokens = r->prefilled = r->prefill_goal = r->chunk = 0;
    r->decoding = false;
    ++preemptions;
    queue.push_front(std::move(r));
  }
  void take_out(FakeSeq& r, std::vector<std::unique_ptr<FakeSeq>>& to) {
    const auto it = std::find_if(running_.begin(), running_.end(),
                                 [&](const auto& p) { return p.get() == &r; });
    used -= r.memory;
    r.memory = 0;
    to.push_back(std::move(*it));
    running_.erase(it);
  }
  void fail_alone(FakeSeq& r, const std::string&) { take_out(r, failed); }
};
static_assert(ServingEngine<FakeEngine>);

WorkloadSpec serving(BatchScheduler scheduler, int max_batch) {
  WorkloadSpec w;
  w.scheduler = scheduler;
  w.max_batch = max_batch;
  w.memory_per_token = 1;  // bytes = tokens: budgets read as token counts
  w.kv_block = 1;
  return w;
}

void enqueue(FakeEngine& e, std::uint64_t id, std::int64_t input, std::int64_t output) {
  auto r = std::make_unique<FakeSeq>();
  r->id = id;
  r->input_tokens = input;
  r->output_tokens = output;
  e.queue.push_back(std::move(r));
}

/// Ends the iteration that just ran: tokens counted, completed requests out (memory freed).
void end_iteration(FakeEngine& e, BatchScheduler scheduler) {
  std::vector<FakeSeq*> done;
  for (const auto& r : e.running()) {
    r->chunks_this_admission += r->chunk;
    if (end_of_iteration(*r, scheduler) == IterationOutcome::completed) done.push_back(r.get());
  }
  for (FakeSeq* r : done) e.take_out(*r, e.completed);
}

// --- admission: closed forms --------------------------------------------------------------

TEST(BatchingPolicy, OrcaReservesTheWholeRequestAndCountsItsDecodeTokenAgainstTheCap) {
  WorkloadSpec w = serving(BatchScheduler::orca, 8);
  w.memory_per_request = 1000;
  w.memory_per_token = 3;
  w.max_tokens_in_batch = 101;
  const Admission a = admission(w, 60, 40, 0, 1000);
  EXPECT_EQ(a.verdict, Admission::Verdict::reserve);
  EXPECT_EQ(a.bytes, 1000 + 3 * (60 + 40));
  EXPECT_EQ(a.kv_tokens, 0);
  EXPECT_EQ(a.goal, 60);
  // goal + 1 (its decode step) against the cap: 100 + 1 fits 101, 101 + 1 does not.
  EXPECT_EQ(admission(w, 100, 1, 0, 1000).verdict, Admission::Verdict::reserve);
  EXPECT_EQ(admission(w, 101, 1, 0, 1000).verdict, Admission::Verdict::too_long);
  // Over the iteration's budget, but under the cap: it waits.
  EXPECT_EQ(admission(w, 60, 1, 0, 59).verdict, Admission::Verdict::wait);
  // A sliding window holds at most its tokens.
  w.attention_window = 50;
  EXPECT_EQ(admission(w, 60, 40, 0, 1000).bytes, 1000 + 3 * 50);
}

TEST(BatchingPolicy, VllmAllocatesThePromptInWholeBlocksAndRecomputesGeneratedTokens) {
  WorkloadSpec w = serving(BatchScheduler::vllm, 8);
  w.memory_per_request = 7;
  w.memory_per_token = 2;
  w.kv_block = 16;
  for (const std::int64_t input : {1, 15, 16, 17, 100}) {
    for (const std::int64_t done : {0, 5}) {
      const Admission a = admission(w, input, 50, done, 1'000'000);
      const std::int64_t goal = input + done;
      EXPECT_EQ(a.goal, goal);
      EXPECT_EQ(a.kv_tokens, (goal + 15) / 16 * 16) << input << " " << done;
      EXPECT_GE(a.kv_tokens, goal);
      EXPECT_LT(a.kv_tokens - goal, 16);
      EXPECT_EQ(a.bytes, 7 + 2 * a.kv_tokens);
    }
  }
  w.max_tokens_in_batch = 100;  // vllm's cap has no decode token: 100 fits, 101 does not
  EXPECT_EQ(admission(w, 100, 1, 0, 100).verdict, Admission::Verdict::reserve);
  EXPECT_EQ(admission(w, 101, 1, 0, 1000).verdict, Admission::Verdict::too_long);
  EXPECT_EQ(admission(w, 90, 1, 0, 89).verdict, Admission::Verdict::wait);
}

TEST(BatchingPolicy, SarathiNeverRejectsALongPromptItChunksIt) {
  WorkloadSpec w = serving(BatchScheduler::sarathi, 8);
  w.max_tokens_in_batch = 64;
  w.chunk_size = 512;
  EXPECT_EQ(sarathi_token_budget(w), 64);
  const Admission a = admission(w, 10'000, 1, 0, 1);
  EXPECT_EQ(a.verdict, Admission::Verdict::reserve);
  EXPECT_EQ(a.kv_tokens, 10'000);
}

TEST(BatchingPolicy, MemoryArithmeticSaturatesInsteadOfOverflowing) {
  WorkloadSpec w = serving(BatchScheduler::orca, 1);
  w.memory_per_token = std::int64_t{1} << 40;
  w.memory_per_request = 5;
  EXPECT_EQ(whole_request_bytes(w, std::int64_t{1} << 30, 0), checked::kMaxInt64);
  EXPECT_EQ(kv_bytes(w, std::int64_t{1} << 30), checked::kMaxInt64);
  EXPECT_EQ(whole_request_bytes(w, 2, 1), 5 + 3 * (std::int64_t{1} << 40));
}

// --- one iteration -------------------------------------------------------------------------

TEST(BatchingPolicy, VllmPreemptsTheNewestRequestWhenABlockIsNotFree) {
  // 10 bytes, 1-token blocks: three 3-token prompts fit (9); their first decode needs one block
  // each: the first takes the last byte, the second finds none and the newest (the third) goes.
  WorkloadSpec w = serving(BatchScheduler::vllm, 8);
  FakeEngine e;
  e.capacity = 10;
  for (std::uint64_t id = 1; id <= 3; ++id) enqueue(e, id, 3, 100);
  KernelScaling s;
  ASSERT_TRUE(plan_iteration(w, e, s));
  EXPECT_FALSE(s.decode);  // prefill first
  EXPECT_EQ(s.input_tokens, 9);
  EXPECT_EQ(e.used, 9);
  end_iteration(e, w.scheduler);
  s = KernelScaling{};  // each iteration starts from a fresh scaling, as the engine's do
  ASSERT_TRUE(plan_iteration(w, e, s));
  EXPECT_TRUE(s.decode);
  ASSERT_EQ(e.running().size(), 2u);
  EXPECT_EQ(e.running()[0]->id, 1u);
  EXPECT_EQ(e.running()[1]->id, 2u);
  ASSERT_EQ(e.queue.size(), 1u);
  EXPECT_EQ(e.queue.front()->id, 3u);
  EXPECT_EQ(e.preemptions, 1);
  EXPECT_EQ(e.used, 4 + 4);  // each survivor holds its prompt and one generated token
  EXPECT_EQ(s.output_tokens, 2);
  EXPECT_EQ(s.context_tokens, 4.0 + 4.0);
}

TEST(BatchingPolicy, ARequestThatCannotGrowEvenAloneFails) {
  WorkloadSpec w = serving(BatchScheduler::vllm, 8);
  FakeEngine e;
  e.capacity = 3;
  enqueue(e, 1, 3, 5);
  KernelScaling s;
  ASSERT_TRUE(plan_iteration(w, e, s));  // the prompt fits exactly
  end_iteration(e, w.scheduler);
  EXPECT_FALSE(plan_iteration(w, e, s));  // its first decode block never does
  EXPECT_EQ(e.failed.size(), 1u);
  EXPECT_EQ(e.used, 0);
}

TEST(BatchingPolicy, VllmAdmitsTheQueueInTheStepItsLastRunningRequestFailsAlone) {
  // 3 bytes: request 1's 3-token prompt fills them, so request 2 (2 tokens) waits; request 1's
  // first decode block never fits and it fails alone; the same plan then prefills request 2
  // (before: nothing ran, and the engine idled until an arrival that might never come).
  WorkloadSpec w = serving(BatchScheduler::vllm, 8);
  FakeEngine e;
  e.capacity = 3;
  enqueue(e, 1, 3, 5);
  enqueue(e, 2, 2, 1);
  KernelScaling s;
  ASSERT_TRUE(plan_iteration(w, e, s));
  EXPECT_EQ(s.input_tokens, 3);
  ASSERT_EQ(e.queue.size(), 1u);
  end_iteration(e, w.scheduler);
  s = KernelScaling{};
  ASSERT_TRUE(plan_iteration(w, e, s));
  EXPECT_FALSE(s.decode);
  EXPECT_EQ(s.input_tokens, 2);
  ASSERT_EQ(e.failed.size(), 1u);
  EXPECT_EQ(e.failed[0]->id, 1u);
  ASSERT_EQ(e.running().size(), 1u);
  EXPECT_EQ(e.running()[0]->id, 2u);
  EXPECT_TRUE(e.queue.empty());
  end_iteration(e, w.scheduler);  // its one token: done
  ASSERT_EQ(e.completed.size(), 1u);
  s = KernelScaling{};
  EXPECT_FALSE(plan_iteration(w, e, s));  // nothing left
}

TEST(BatchingPolicy, SarathiChunksAPromptIntoBudgetSizedPiecesThatSumToIt) {
  WorkloadSpec w = serving(BatchScheduler::sarathi, 4);
  w.chunk_size = 128;
  FakeEngine e;
  e.capacity = 1'000'000;
  enqueue(e, 1, 1000, 3);
  std::vector<std::int64_t> chunks;
  KernelScaling s;
  while (e.completed.empty()) {
    ASSERT_TRUE(plan_iteration(w, e, s));
    if (s.input_tokens > 0) chunks.push_back(s.input_tokens);
    EXPECT_LE(s.batch_tokens, 128);
    end_iteration(e, w.scheduler);
  }
  // ceil(1000 / 128) = 8 chunks: seven of 128 and one of 1000 - 7 x 128 = 104.
  ASSERT_EQ(chunks.size(), 8u);
  for (std::size_t i = 0; i < 7; ++i) EXPECT_EQ(chunks[i], 128);
  EXPECT_EQ(chunks[7], 104);
  EXPECT_EQ(e.completed.front()->tokens_done, 3);
}

// --- random instances ----------------------------------------------------------------------

TEST(BatchingPolicy, RandomInstancesKeepEveryBudgetAndFinishEveryRequest) {
  std::mt19937_64 rng(20261206);
  const BatchScheduler schedulers[] = {BatchScheduler::orca, BatchScheduler::vllm,
                                       BatchScheduler::sarathi};
  int preempting_instances = 0;
  for (int instance = 0; instance < 600; ++instance) {
    const BatchScheduler scheduler = schedulers[instance % 3];
    WorkloadSpec w = serving(scheduler, 1 + static_cast<int>(rng() % 8));
    w.kv_block = 1 + static_cast<std::int64_t>(rng() % 32);
    w.chunk_size = 1 + static_cast<std::int64_t>(rng() % 256);
    w.max_tokens_in_batch = rng() % 2 ? 0 : 16 + static_cast<std::int64_t>(rng() % 512);
    w.attention_window = rng() % 4 == 0 ? 8 + static_cast<std::int64_t>(rng() % 128) : 0;
    w.memory_per_request = static_cast<std::int64_t>(rng() % 64);
    FakeEngine e;
    e.capacity = 64 + static_cast<std::int64_t>(rng() % 4096);
    const int requests = 1 + static_cast<int>(rng() % 24);
    for (int i = 0; i < requests; ++i) {
      enqueue(e, static_cast<std::uint64_t>(i + 1), 1 + static_cast<std::int64_t>(rng() % 400),
              static_cast<std::int64_t>(rng() % 60));
    }
    const std::int64_t sarathi_budget = sarathi_token_budget(w);
    int iterations = 0;
    for (;; ++iterations) {
      ASSERT_LT(iterations, 200'000) << "instance " << instance << " does not terminate";
      KernelScaling s;
      if (!plan_iteration(w, e, s)) {
        // The engine holds all the memory: a plan that runs nothing while requests wait would
        // idle until the next arrival, and after the last one forever.
        ASSERT_TRUE(e.queue.empty())
            << "instance " << instance << " stalls with " << e.queue.size() << " requests waiting";
        break;
      }
      // Never past max_batch or the memory; the engine's books match the requests'.
      ASSERT_LE(e.in_flight(), w.max_batch);
      std::int64_t held = 0, chunks = 0, decoders = 0;
      for (const auto& r : e.running()) {
        held += r->memory;
        chunks += r->chunk;
        decoders += r->decoding ? 1 : 0;
        // A chunk never passes the prompt; a decoder's cache holds its next token.
        ASSERT_LE(r->prefilled + r->chunk, r->prefill_goal);
        if (scheduler != BatchScheduler::orca) {
          ASSERT_EQ(r->kv_tokens % w.kv_block, 0);
          if (r->decoding) {
            ASSERT_GE(r->kv_tokens, kv_tokens_needed(w, r->input_tokens, r->tokens_done));
          }
        }
      }
      ASSERT_EQ(held, e.used);
      ASSERT_LE(e.used, e.capacity);
      ASSERT_EQ(chunks, s.input_tokens);
      // Token budgets: orca's prompts plus one per request in flight before them (a new
      // request's first token comes from its prompt); vllm's prefill iterations; every sarathi
      // iteration (decodes count one each).
      if (w.max_tokens_in_batch > 0 && scheduler == BatchScheduler::orca) {
        ASSERT_LE(s.batch_tokens, w.max_tokens_in_batch);
      }
      if (w.max_tokens_in_batch > 0 && scheduler == BatchScheduler::vllm && !s.decode) {
        ASSERT_LE(s.input_tokens, w.max_tokens_in_batch);
      }
      if (scheduler == BatchScheduler::sarathi) {
        ASSERT_LE(s.batch_tokens, sarathi_budget);
        ASSERT_EQ(s.output_tokens, decoders);
      }
      if (scheduler == BatchScheduler::vllm) {
        // Prefill first: an iteration either prefills or decodes, never both.
        ASSERT_TRUE(s.input_tokens == 0 || decoders == 0);
      }
      end_iteration(e, scheduler);
    }
    ASSERT_FALSE(e.preempted_other_than_newest) << "instance " << instance;
    if (e.preemptions > 0) ++preempting_instances;
    // Nothing left: every request completed with its tokens or was rejected.
    ASSERT_TRUE(e.queue.empty()) << "instance " << instance;
    ASSERT_TRUE(e.running().empty());
    ASSERT_EQ(e.used, 0);
    ASSERT_EQ(static_cast<int>(e.completed.size() + e.failed.size()), requests);
    for (const auto& r : e.completed) {
      ASSERT_EQ(r->tokens_done, std::max<std::int64_t>(1, r->output_tokens));
      // Its last admission computed its whole prompt (input + tokens generated before it).
      ASSERT_EQ(r->chunks_this_admission, r->prefill_goal);
    }
  }
  EXPECT_GT(preempting_instances, 10);  // the instances do reach the preemption path
}

// --- solo latency --------------------------------------------------------------------------

TEST(BatchingPolicy, SoloLatencyCountsTheIterationsOfEachScheduler) {
  const auto one = [](const KernelScaling&) { return 1.0; };
  for (const std::int64_t prompt : {1, 100, 1000}) {
    for (const std::int64_t output : {0, 1, 7}) {
      const std::int64_t outputs = std::max<std::int64_t>(1, output);
      WorkloadSpec w = serving(BatchScheduler::orca, 8);
      EXPECT_EQ(batched_solo_latency(w, prompt, output, one), static_cast<double>(outputs));
      w.scheduler = BatchScheduler::vllm;  // one prefill iteration yields the first token
      EXPECT_EQ(batched_solo_latency(w, prompt, output, one), static_cast<double>(outputs));
      w.scheduler = BatchScheduler::sarathi;
      w.chunk_size = 64;
      EXPECT_EQ(batched_solo_latency(w, prompt, output, one),
                static_cast<double>((prompt + 63) / 64 + outputs - 1));
    }
  }
}

TEST(BatchingPolicy, SoloLatencySumsEachDecodesContext) {
  // A context-dependent kernel: decode k reads P + k tokens, so sum_{k=1}^{n-1} (P + k).
  WorkloadSpec w = serving(BatchScheduler::vllm, 8);
  KernelSpec k;
  k.per_context_token = 1;
  w.kernels.push_back(k);
  const auto context = [](const KernelScaling& s) { return s.decode ? s.context_tokens : 0.0; };
  const double P = 300, n = 20;
  EXPECT_EQ(batched_solo_latency(w, 300, 20, context), P * (n - 1) + (n - 1) * n / 2);
  // orca's first iteration decodes too, reading the prompt.
  w.scheduler = BatchScheduler::orca;
  EXPECT_EQ(batched_solo_latency(w, 300, 20, context), P * n + (n - 1) * n / 2);
  // A window caps every read.
  w.attention_window = 305;
  EXPECT_EQ(batched_solo_latency(w, 300, 20, context), 300 + 301 + 302 + 303 + 304 + 15.0 * 305);
}

}  // namespace
}  // namespace gpumux
