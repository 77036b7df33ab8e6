export type Next = () => Promise<void>;
export type Middleware<C> = (ctx: C, next: Next) => Promise<void>;

/**
 * Runs middlewares outermost first, each deciding whether and when to call `next`. Calling
 * `next` twice is a bug in the middleware and fails loudly rather than running work twice.
 * `dispatch` hands back each middleware's own promise instead of wrapping it in another async
 * frame: a call goes through the whole chain, so every level of wrapping was paid on every call.
 */
export function compose<C>(middlewares: readonly Middleware<C>[]): (ctx: C) => Promise<void> {
  return (ctx) => {
    let lastIndex = -1;
    const dispatch = (index: number): Promise<void> => {
      if (index <= lastIndex) return Promise.reject(new Error('next() called more than once in one middleware'));
      lastIndex = index;
      const middleware = middlewares[index];
      if (!middleware) return Promise.resolve();
      try {
        return middleware(ctx, () => dispatch(index + 1));
      } catch (error) {
        return Promise.reject(error);
      }
    };
    return dispatch(0);
  };
}
