#pragma once
// Desire controls: a policy that reshapes a language model's next-token distribution,
// and two bridges that summarise what it did. These are heuristics with documented
// formulas; the defaults leave sampling unchanged (temperature 1, every weight 0), so a
// pipeline only acts when configured to. Float64 throughout; one step is O(vocab * concepts).
//
// One step, given logits l (vocab), the previous token p and an optional concept mix c (concepts):
//   n = number of steps taken before this one
//   phase = "observation" if n < observation_horizon, "injection" if n < integration_horizon,
//           else "integration"
//   ramp = min(1, (n + 1) / integration_horizon)                      (warm-up of the weights)
//   alpha = alpha_end * ramp, beta = beta_end * ramp (0 in observation), gamma, lambda constant
//   score_i = log_softmax(l)_i / T
//             + alpha * transition[p, i]                   (log-prior of token i after p; default 0)
//             + beta * avoidance_i                         (learned in observation, see below)
//             + gamma * sum_k c_k bridge[i, k]             (affinity of token i to the wanted concepts)
//             - lambda * repression_i                      (default 0)
//   q = softmax(score), entropy H = -sum q log q (nats), logit_offsets = score - log_softmax(l)
//   T <- clamp(T + eta * (target_entropy - H), temp_min, temp_max)   (eta 0: T stays)
// During observation each step adds (1 - q_i) to a running avoidance total; its mean over
// the observed steps, centred to mean 0, is the avoidance_i used afterwards (tokens the
// model kept unlikely get pushed further down when beta < 0, up when beta > 0).
// bridge[i, k] (vocab x concepts) defaults to token i -> concept i mod K.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace st::nn {

struct DesireConfig {
  int64_t vocab_size = 0;
  int64_t concepts = 3;
  double alpha_end = 0.0, beta_end = 0.0, gamma = 0.0, lambda = 0.0;
  int64_t observation_horizon = 1, integration_horizon = 2;
  double target_entropy = 0.8, eta = 0.0, temp_min = 0.4, temp_max = 1.6;
};

struct DesireWeights {
  double alpha = 0, beta = 0, gamma = 0, lambda = 0;
};

struct DesireStep {
  int64_t step = 0;          // index of this step (0-based)
  std::string phase;         // observation | injection | integration
  double temperature = 1.0;  // the temperature used for this step
  double next_temperature = 1.0;
  double entropy = 0.0;       // H(q) in nats
  double base_entropy = 0.0;  // H(softmax(l)) in nats
  DesireWeights weights;
  std::vector<double> probabilities;  // q
  std::vector<double> logit_offsets;  // score - log_softmax(l)
};

// Summaries of pipeline steps, drained by a trainer or a notebook.
class DesireTrainerBridge {
 public:
  void record(const DesireStep& step);
  size_t size() const { return steps_.size(); }
  // Means over the recorded steps since the last drain and per-phase counts; nullopt when empty.
  std::optional<std::map<std::string, double>> drain_summary();

 private:
  std::vector<DesireStep> steps_;
};

// Turns each step's weights into band multipliers for a roundtable trainer:
//   bary = (alpha, gamma, beta) / (alpha + gamma + beta)   ((1/3, 1/3, 1/3) when all are 0)
//   multipliers (above, here, beneath) = clamp(1 + blend * (bary - 1/3), 0.35, 1.65)
//   drift = clamp(tanh(lambda) * drift_gain, -1, 1)
// With all weights 0 the multipliers are 1 and the drift 0.
class DesireRoundtableBridge {
 public:
  explicit DesireRoundtableBridge(double blend = 0.35, double drift_gain = 0.35);
  void record(const DesireStep& step);
  double blend() const { return blend_; }
  double drift_gain() const { return drift_gain_; }
  void set_blend(double v);
  void set_drift_gain(double v);
  struct Impulse {
    double above = 1, here = 1, beneath = 1, drift = 0;
  };
  std::optional<Impulse> impulse() const { return last_; }
  std::optional<std::map<std::string, double>> drain_summary();

 private:
  double blend_, drift_gain_;
  std::optional<Impulse> last_;
  std::vector<std::pair<DesireStep, Impulse>> steps_;
};

// Both bridges together, shared with the pipelines they are attached to.
struct DesireTelemetryBundle {
  std::shared_ptr<DesireTrainerBridge> trainer;        // null when not wanted
  std::shared_ptr<DesireRoundtableBridge> roundtable;  // null when not wanted
};

class DesirePipeline {
 public:
  explicit DesirePipeline(DesireConfig config);
  // previous_token in [0, vocab); concept_mix: empty, or `concepts` finite non-negative weights
  // (normalised to sum 1). Throws ValueError naming the bad value.
  DesireStep step(const std::vector<double>& logits, int64_t previous_token,
                  const std::vector<double>& concept_mix = {});
  const DesireConfig& config() const { return config_; }
  double temperature() const { return temperature_; }
  int64_t steps_taken() const { return steps_; }
  // transition: vocab x vocab row-major log-prior; repression: vocab; bridge: vocab x concepts
  // non-negative rows. Each is checked for size and finiteness.
  void set_transition_prior(const std::vector<double>& matrix);
  void set_repression(const std::vector<double>& values);
  void set_concept_bridge(const std::vector<double>& matrix);
  const std::vector<double>& concept_bridge() const { return bridge_; }
  // Telemetry only: stores a signal per source ("zspace" or "roundtable"); never changes
  // the distribution. Empty clears that source; non-finite values throw ValueError.
  void ingest_geometry_bias(const std::vector<double>& signal, const std::string& source = "zspace");
  void clear_geometry_bias();
  // rms energies of the stored signals (z weighted 0.25, roundtable 0.1), their sum,
  // the balance |z - rt| / (z + rt), how many signals were ingested and steps since the last;
  // nullopt when nothing is stored.
  std::optional<std::map<std::string, double>> geometry_bias_metrics() const;
  // Sinks that receive every step.
  void attach_trainer_bridge(std::shared_ptr<DesireTrainerBridge> bridge) { trainer_ = std::move(bridge); }
  void attach_roundtable_bridge(std::shared_ptr<DesireRoundtableBridge> bridge) { roundtable_ = std::move(bridge); }
  void attach_bundle(const DesireTelemetryBundle& bundle) {
    trainer_ = bundle.trainer;
    roundtable_ = bundle.roundtable;
  }
  // Restarts the schedule, temperature and avoidance statistics (keeps priors and bridges).
  void reset();

 private:
  DesireConfig config_;
  double temperature_ = 1.0;
  int64_t steps_ = 0;
  int64_t observed_ = 0;
  std::vector<double> avoidance_sum_;
  std::vector<double> transition_, repression_, bridge_;
  std::map<std::string, std::vector<double>> geometry_;
  int64_t geometry_ingested_ = 0, geometry_step_ = 0;
  std::shared_ptr<DesireTrainerBridge> trainer_;
  std::shared_ptr<DesireRoundtableBridge> roundtable_;
};

}  // namespace st::nn
