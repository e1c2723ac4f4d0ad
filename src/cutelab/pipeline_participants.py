"""A pipeline's participants (CuTe DSL's ``make_participants``): a producer and a consumer, each with its
own pipeline state, over any pipeline (PipelineAsync, PipelineTmaAsync, ...). Imports no pipeline
module, so that every pipeline can make them.
"""

from __future__ import annotations

from typing import Any, Optional


class ImmutableResourceHandle:
    """One stage as a participant acquired it: ``index``, ``count``, and the pipeline it came from."""

    def __init__(self, origin: Any, immutable_state: Any):
        self._origin, self._state = origin, immutable_state

    @property
    def index(self) -> Any:
        return self._state.index

    @property
    def count(self) -> Any:
        return self._state.count

    def get_origin(self) -> Any:
        return self._origin

    # CuTe DSL's DynamicExpression protocol, as its handle has it: a handle is carried through a runtime loop or
    # branch by its state's values (flash_attn.cute's SM100 backward keeps `handle_Q = handle_Q_next` across
    # the iterations of its MMA loop), the pipeline it came from kept
    def __extract_mlir_values__(self) -> list:
        return self._state._handle_values()

    def __new_from_mlir_values__(self, values: list) -> "ImmutableResourceHandle":
        return type(self)(self._origin, self._state._from_handle_values(values))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._state!r})"


class _Participant:
    def __init__(self, pipeline: Any, state: Any):
        self._pipeline, self._state = pipeline, state

    def clone(self) -> Any:
        return type(self)(self._pipeline, self._state.clone())

    def reset(self) -> None:
        """Start the count from zero again (at the same stage)."""
        self._state.reset_count()

    def advance(self) -> None:
        self._state.advance()

    def current_handle(self) -> ImmutableResourceHandle:
        return self.Handle(self._pipeline, self._state.clone())

    # CuTe DSL keeps these in name-mangled attributes (self.__state, self.__pipeline); CUTLASS's Blackwell
    # FMHA reads producer._PipelineProducer__state to wait on a stage with its own byte count
    _PipelineProducer__state = property(lambda self: self._state)
    _PipelineProducer__pipeline = property(lambda self: self._pipeline)
    _PipelineConsumer__state = property(lambda self: self._state)
    _PipelineConsumer__pipeline = property(lambda self: self._pipeline)


class PipelineProducer(_Participant):
    """The producer's side: ``acquire()`` a stage (wait until it is empty), write it, ``commit()``."""

    class Handle(ImmutableResourceHandle):
        def commit(self) -> None:
            self._origin.producer_commit(self._state)

        @property
        def barrier(self) -> Any:
            return self._origin.producer_get_barrier(self._state)

    ImmutableResourceHandle = Handle

    def acquire(self, try_acquire_token: Any = None) -> ImmutableResourceHandle:
        self._pipeline.producer_acquire(self._state, try_acquire_token)
        return self.current_handle()

    def acquire_and_advance(self, try_acquire_token: Any = None) -> ImmutableResourceHandle:
        h = self.acquire(try_acquire_token)
        self._state.advance()
        return h

    def try_acquire(self) -> Any:
        return self._pipeline.producer_try_acquire(self._state)

    def commit(self, handle: Optional[ImmutableResourceHandle] = None) -> None:
        """Commit the handle's stage (or the current one)."""
        self._pipeline.producer_commit(handle._state if handle is not None else self._state)

    def tail(self) -> None:
        """Wait until the consumers released every stage (keeps the block alive until then)."""
        self._pipeline.producer_tail(self._state)


class PipelineConsumer(_Participant):
    """The consumer's side: ``wait()`` for a stage (until it is full), read it, ``release()``."""

    class Handle(ImmutableResourceHandle):
        def release(self) -> None:
            self._origin.consumer_release(self._state)

        @property
        def barrier(self) -> Any:
            return self._origin.consumer_get_barrier(self._state)

    ImmutableResourceHandle = Handle

    def wait(self, try_wait_token: Any = None) -> ImmutableResourceHandle:
        self._pipeline.consumer_wait(self._state, try_wait_token)
        return self.current_handle()

    def wait_and_advance(self, try_wait_token: Any = None) -> ImmutableResourceHandle:
        h = self.wait(try_wait_token)
        self._state.advance()
        return h

    def try_wait(self) -> Any:
        return self._pipeline.consumer_try_wait(self._state)

    def release(self, handle: Optional[ImmutableResourceHandle] = None) -> None:
        """Release the handle's stage (or the current one)."""
        self._pipeline.consumer_release(handle._state if handle is not None else self._state)
