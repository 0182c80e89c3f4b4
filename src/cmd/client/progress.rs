//! Progress: a bar over a batch's statuses (from a coordinator's watch) until it is finished,
//! its position the batch's finished jobs ([`cubefleet_proto::BatchStatus::finished`]).

use cubefleet_proto::client::Client;
use cubefleet_proto::{BatchRef, BatchStatus};
use indicatif::{ProgressBar, ProgressStyle};
use tokio_stream::{Stream, StreamExt};

use super::status::eta_text;

/// Shows a progress bar for a batch until it is finished; returns the final status.
pub(crate) async fn watch(client: &Client, batch: &str) -> anyhow::Result<BatchStatus> {
    let stream = client
        .batches
        .clone()
        .watch_batch(BatchRef {
            batch_id: batch.to_string(),
        })
        .await?
        .into_inner();
    show_progress(stream).await
}

/// Shows a progress bar over a batch's statuses (from a coordinator's watch) until the stream
/// ends; returns the last status.
pub(crate) async fn show_progress<E>(
    mut statuses: impl Stream<Item = Result<BatchStatus, E>> + Unpin,
) -> anyhow::Result<BatchStatus>
where
    E: std::error::Error + Send + Sync + 'static,
{
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{bar:40}] {pos}/{len} {msg} [{elapsed_precise}]")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    let mut last = None;
    while let Some(s) = statuses.next().await {
        let s = s?;
        bar.set_length(s.total);
        bar.set_position(s.finished());
        bar.set_message(format!("{:.1}/s, ETA {}", s.rate, eta_text(s.eta_seconds)));
        last = Some(s);
    }
    bar.finish();
    last.ok_or_else(|| anyhow::anyhow!("no progress received"))
}
