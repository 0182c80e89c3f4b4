//! The client commands: `submit`, `status`, `results`, `cancel`, `revoke`, `lookup`. They
//! speak to a coordinator through `cubefleet-proto` alone (ranges are `cubefleet-tables`'
//! [`States`](cubefleet_tables::states::States)): nothing of the coordinator or worker crates.
//!
//! | part | what |
//! | --- | --- |
//! | [`args`] | the flags, and what a batch is made of (a file, a range, a sample) |
//! | [`submission`] | a file's lines in chunks, their content hash, the `Submit` stream |
//! | [`progress`] | the progress bar of `--wait` and `--watch` |
//! | [`export`] | `results`: JSON lines, CSV, Parquet |
//! | [`chunks`] | `results --chunks`: per-chunk counts |
//! | [`status`] | `status`: a batch's view as text or JSON |

mod args;
mod chunks;
mod export;
mod progress;
mod status;
mod submission;

use std::io::Write;
use std::process::ExitCode;

use cubefleet_proto::{
    submit_request, BatchRef, BatchSpec, ListBatchesRequest, LookupRequest, SubmitRequest,
};
use cubefleet_tables::states::MAX_LINES;

pub(crate) use args::{
    BatchArgs, InputArgs, KeepArg, LookupArgs, ResultsArgs, ResultsFormat, RevokeArgs, StatusArgs,
    SubmitArgs,
};
use chunks::export_chunks;
pub(crate) use export::ResultsWriter;
use export::{export, result_line};
use progress::watch;
pub(crate) use progress::{show_progress, thousands};
use status::{status_json, status_text};
use submission::submit_file;
pub(crate) use submission::{content_hash, read_chunks};

use super::process::runtime;

/// The exit code of `submit --wait` for a batch that was cancelled before every line was
/// answered (2 is an error of the command itself, 1 is `run`'s "some lines were invalid").
const CANCELLED_EXIT: u8 = 3;

/// What `cancel` did, in words: how many jobs will not be searched and what stays
/// (`was_cancelled`: the batch had been cancelled before).
fn cancel_text(s: &cubefleet_proto::BatchStatus, was_cancelled: bool) -> String {
    if was_cancelled {
        return format!(
            "batch {} was already cancelled ({} of {} lines not searched)",
            s.batch_id, s.cancelled, s.total
        );
    }
    if s.cancelled == 0 {
        return format!(
            "batch {}: nothing left to cancel ({} of {} lines were already answered)",
            s.batch_id,
            s.finished(),
            s.total
        );
    }
    format!(
        "cancelled batch {}: {} of {} lines will not be searched; the {} answered before stay \
         (`cubefleet results {}`)",
        s.batch_id,
        s.cancelled,
        s.total,
        s.done + s.invalid + s.failed,
        s.batch_id
    )
}

pub(crate) fn submit(args: SubmitArgs) -> anyhow::Result<ExitCode> {
    let connect = args.connect.clone();
    runtime()?
        .block_on(async move {
            let client = args.connect.connect().await?;
            let asked = args.input.question(&args.mode, args.timeout)?.to_wire();
            let spec = args.input.define(BatchSpec {
                batch_id: args.batch_id.clone().unwrap_or_default(),
                name: match &args.name {
                    Some(n) => n.clone(),
                    None => args.input.name()?,
                },
                mode: Some(asked),
                priority: args.priority,
                confirm: args.confirm,
                ..BatchSpec::default()
            })?;
            let r = match args.input.lines() {
                Some(file) => {
                    // checked against the batch's when --batch-id names one that exists
                    let spec = BatchSpec {
                        content_hash: content_hash(file)?.map_or_else(Vec::new, Vec::from),
                        ..spec
                    };
                    submit_file(&client, file, spec).await.map_err(|e| {
                        e.context(
                            "the submission was not acknowledged (part of it may be stored): \
                         submit the file again with the same --batch-id to continue the batch",
                        )
                    })?
                }
                None => {
                    let first = SubmitRequest {
                        part: Some(submit_request::Part::Spec(spec)),
                    };
                    client
                        .batches
                        .clone()
                        .submit(tokio_stream::once(first))
                        .await?
                        .into_inner()
                }
            };
            client.check_question_kept(&r.batch_id, &asked).await?;
            let mut out = crate::output::Stdout::new();
            writeln!(out, "{}", r.batch_id)?;
            out.flush()?;
            if args.input.lines().is_some() {
                eprintln!(
                    "stored {} lines ({} invalid, {} answered from the store)",
                    r.total, r.invalid, r.from_store
                );
            } else {
                eprintln!(
                    "stored the definition of {} states (jobs are made as workers lease them)",
                    r.total
                );
                let most = MAX_LINES;
                if r.total > most {
                    eprintln!(
                        "note: a batch makes at most {most} jobs, so this one covers its first \
                     {most} states; submit the rest as another batch"
                    );
                }
            }
            if args.wait {
                let s = watch(&client, &r.batch_id).await?;
                eprintln!("{}", status_text(&s));
                if s.cancelled_batch {
                    eprintln!(
                        "batch {} was cancelled: {} of {} lines were not searched",
                        r.batch_id, s.cancelled, s.total
                    );
                    return Ok(ExitCode::from(CANCELLED_EXIT));
                }
            }
            Ok(ExitCode::SUCCESS)
        })
        .map_err(|e| connect.explain(e))
}

pub(crate) fn status(args: StatusArgs) -> anyhow::Result<ExitCode> {
    let connect = args.connect.clone();
    runtime()?
        .block_on(async move {
            let client = args.connect.connect().await?;
            let statuses = match &args.batch {
                Some(b) if args.watch => vec![watch(&client, b).await?],
                Some(b) => vec![client
                    .batches
                    .clone()
                    .get_batch(BatchRef {
                        batch_id: b.clone(),
                    })
                    .await?
                    .into_inner()],
                None => {
                    client
                        .batches
                        .clone()
                        .list_batches(ListBatchesRequest {})
                        .await?
                        .into_inner()
                        .batches
                }
            };
            for s in &statuses {
                if args.json {
                    println!("{}", status_json(s));
                } else {
                    println!("{}", status_text(s));
                }
            }
            Ok(ExitCode::SUCCESS)
        })
        .map_err(|e| connect.explain(e))
}

pub(crate) fn results(args: ResultsArgs) -> anyhow::Result<ExitCode> {
    let connect = args.connect.clone();
    runtime()?
        .block_on(async move {
            let client = args.connect.connect().await?;
            let mut out: std::io::BufWriter<Box<dyn Write>> =
                std::io::BufWriter::new(match &args.out {
                    Some(p) => Box::new(std::fs::File::create(p)?),
                    None => Box::new(crate::output::Stdout::new()),
                });
            if args.chunks {
                export_chunks(&client, &args.batch, args.format, &mut out).await?;
            } else {
                export(
                    &client,
                    &args.batch,
                    args.status.clone(),
                    args.format,
                    &mut out,
                )
                .await?;
            }
            out.flush()?;
            Ok(ExitCode::SUCCESS)
        })
        .map_err(|e| connect.explain(e))
}

pub(crate) fn cancel(args: BatchArgs) -> anyhow::Result<ExitCode> {
    let connect = args.connect.clone();
    runtime()?
        .block_on(async move {
            let client = args.connect.connect().await?;
            let batch = BatchRef {
                batch_id: args.batch.clone(),
            };
            let before = client.batches.clone().get_batch(batch.clone()).await?;
            let was_cancelled = before.into_inner().cancelled_batch;
            let s = client
                .batches
                .clone()
                .cancel_batch(batch)
                .await?
                .into_inner();
            println!("{}", cancel_text(&s, was_cancelled));
            println!("{}", status_text(&s));
            Ok(ExitCode::SUCCESS)
        })
        .map_err(|e| connect.explain(e))
}

pub(crate) fn revoke(args: RevokeArgs) -> anyhow::Result<ExitCode> {
    let connect = args.connect.clone();
    runtime()?
        .block_on(async move {
            let client = args.connect.connect().await?;
            let r = client
                .batches
                .clone()
                .revoke(cubefleet_proto::RevokeRequest {
                    worker: args.worker.clone(),
                })
                .await?
                .into_inner();
            let what = if r.credential_revoked {
                "worker and its credential"
            } else {
                "worker"
            };
            println!(
                "{what} {} revoked; {} answers resting on its claims queued again",
                args.worker, r.requeued
            );
            Ok(ExitCode::SUCCESS)
        })
        .map_err(|e| connect.explain(e))
}

pub(crate) fn lookup(args: LookupArgs) -> anyhow::Result<ExitCode> {
    let connect = args.connect.clone();
    runtime()?
        .block_on(async move {
            let client = args.connect.connect().await?;
            let r = client
                .batches
                .clone()
                .lookup(LookupRequest {
                    position: args.position.clone(),
                })
                .await?
                .into_inner();
            match r.result {
                Some(res) if r.found => {
                    let mut line = result_line(res);
                    line.input = args.position.clone();
                    println!("{}", serde_json::to_string(&line)?);
                    Ok(ExitCode::SUCCESS)
                }
                _ => {
                    eprintln!("no stored result for this position");
                    Ok(ExitCode::from(1))
                }
            }
        })
        .map_err(|e| connect.explain(e))
}
