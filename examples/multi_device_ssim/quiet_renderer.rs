//! A burn-train renderer that prints nothing and keeps each training batch's loss, so the example
//! prints its own summary and the test can check that the loss falls.

use std::sync::{Arc, Mutex};

use burn::train::logger::{EvaluationProgressLogger, TrainingProgressLogger};
use burn::train::metric::{MetricDefinition, NumericEntry};
use burn::train::renderer::{
    EvaluationName, MetricState, MetricsRenderer, MetricsRendererEvaluation,
    MetricsRendererTraining,
};

/// Records the training loss metric's per-batch values (its only numeric metric).
#[derive(Clone, Default)]
pub struct QuietRenderer {
    /// One value per batch, from every device, in processing order.
    pub train_losses: Arc<Mutex<Vec<f64>>>,
}

impl MetricsRendererTraining for QuietRenderer {
    fn update_train(&mut self, state: MetricState) {
        // `Aggregated` is a batch's value; the epoch's mean arrives as `Final`.
        if let MetricState::Numeric(
            _,
            Some(NumericEntry::Aggregated {
                aggregated_value, ..
            }),
        ) = state
            && let Ok(mut losses) = self.train_losses.lock()
        {
            losses.push(aggregated_value);
        }
    }

    fn update_valid(&mut self, _state: MetricState) {}
}

impl MetricsRendererEvaluation for QuietRenderer {
    fn update_test(&mut self, _name: EvaluationName, _state: MetricState) {}
}

impl TrainingProgressLogger for QuietRenderer {
    fn start(
        &mut self,
        _total_epochs: usize,
        _starting_epoch: usize,
        _total_items: Option<usize>,
        _label: Option<&str>,
    ) {
    }
    fn update_epoch(&mut self, _epoch: usize) {}
    fn start_split(&mut self, _split: &str, _total_items: usize) {}
    fn update_split(&mut self, _items_processed: usize) {}
    fn end_split(&mut self) {}
    fn end(&mut self) {}
    fn log_event_training(&mut self, _event: String) {}
}

impl EvaluationProgressLogger for QuietRenderer {
    fn start_global_progress(&mut self, _total_tests: usize) {}
    fn start_test(&mut self, _name: &str, _total_items: usize) {}
    fn update_test_progress(&mut self, _items_processed: usize) {}
    fn end_test(&mut self) {}
    fn end_global_progress(&mut self) {}
    fn log_event_evaluation(&mut self, _event: String) {}
}

impl MetricsRenderer for QuietRenderer {
    fn manual_close(&mut self) {}
    fn register_metric(&mut self, _definition: MetricDefinition) {}
}
