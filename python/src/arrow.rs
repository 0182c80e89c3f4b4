//! Record batches handed to pyarrow: written as an Arrow IPC stream into one buffer, which
//! `pyarrow.ipc.open_stream` reads without parsing any text (the columns keep their types:
//! `status` a dictionary, so `to_pandas()` gives a categorical).

use arrow_array::RecordBatch;
use arrow_schema::{ArrowError, SchemaRef};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// The IPC stream of `batches` (all of `schema`).
fn ipc(schema: &SchemaRef, batches: &[RecordBatch]) -> Result<Vec<u8>, ArrowError> {
    let mut out = Vec::new();
    let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut out, schema)?;
    for b in batches {
        w.write(b)?;
    }
    w.finish()?;
    drop(w);
    Ok(out)
}

/// `batches` (of the result schema, or none) as one `pyarrow.Table`.
pub(crate) fn table(py: Python<'_>, batches: &[RecordBatch]) -> PyResult<Py<PyAny>> {
    let schema = batches
        .first()
        .map_or_else(cubefleet_columns::schema, |b| b.schema());
    let reader = stream_reader(py, &schema, batches)?;
    Ok(reader.call_method0("read_all")?.unbind())
}

/// `batch` as one `pyarrow.RecordBatch`.
pub(crate) fn record_batch(py: Python<'_>, batch: &RecordBatch) -> PyResult<Py<PyAny>> {
    let reader = stream_reader(py, &batch.schema(), std::slice::from_ref(batch))?;
    Ok(reader.call_method0("read_next_batch")?.unbind())
}

/// A `pyarrow.ipc.RecordBatchStreamReader` over `batches`.
fn stream_reader<'py>(
    py: Python<'py>,
    schema: &SchemaRef,
    batches: &[RecordBatch],
) -> PyResult<Bound<'py, PyAny>> {
    let bytes = py
        .detach(|| ipc(schema, batches))
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    let bytes = PyBytes::new(py, &bytes);
    py.import("pyarrow.ipc")?
        .call_method1("open_stream", (bytes,))
}
