//! Progress: a bar over a batch's statuses (from a coordinator's watch) until it is finished,
//! its position the batch's finished jobs ([`cubefleet_proto::BatchStatus::finished`]).

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use cubefleet_proto::client::Client;
use cubefleet_proto::{BatchRef, BatchStatus};
use indicatif::{ProgressBar, ProgressStyle};
use tokio_stream::{Stream, StreamExt};

use super::status::eta_text;

/// Time between two progress lines when standard error is not a terminal.
const PLAIN_EVERY: Duration = Duration::from_secs(10);

/// A batch's progress as one line: answered of total, rate, ETA.
pub(crate) fn progress_line(s: &BatchStatus) -> String {
    let answered = s.finished() - s.cancelled.min(s.finished());
    format!(
        "{} of {} answered ({:.0} %), {:.1}/s, ETA {}",
        thousands(answered),
        thousands(s.total),
        100.0 * answered as f64 / s.total.max(1) as f64,
        s.rate,
        eta_text(s.eta_seconds)
    )
}

/// `n` with a comma between thousands (`2,998`).
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

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
    // not on a terminal (a log file, CI), the bar is not drawn: a line now and then instead
    let plain = !std::io::stderr().is_terminal();
    let mut said = Instant::now();
    let mut last = None;
    while let Some(s) = statuses.next().await {
        let s = s?;
        if plain && said.elapsed() >= PLAIN_EVERY && s.total > 0 {
            eprintln!("{}", progress_line(&s));
            said = Instant::now();
        }
        bar.set_length(s.total);
        // the jobs answered: a cancelled job is finished but not answered
        bar.set_position(s.finished() - s.cancelled.min(s.finished()));
        bar.set_message(format!("{:.1}/s, ETA {}", s.rate, eta_text(s.eta_seconds)));
        last = Some(s);
    }
    match &last {
        // a cancelled batch is not finished: the bar stays where the work stopped
        Some(s) if s.cancelled_batch => {
            bar.abandon_with_message(format!("cancelled: {} lines not searched", s.cancelled))
        }
        _ => bar.finish(),
    }
    last.ok_or_else(|| anyhow::anyhow!("no progress received"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_separated() {
        for (n, want) in [
            (0, "0"),
            (999, "999"),
            (2998, "2,998"),
            (1_000_000, "1,000,000"),
        ] {
            assert_eq!(thousands(n), want);
        }
    }

    #[test]
    fn a_progress_line_counts_answered_lines_not_cancelled_ones() {
        let s = BatchStatus {
            total: 3000,
            done: 2990,
            invalid: 8,
            cancelled: 2,
            ..BatchStatus::default()
        };
        assert!(progress_line(&s).starts_with("2,998 of 3,000 answered (100 %)"));
    }
}
