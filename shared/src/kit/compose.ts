export type Next = () => Promise<void>;
export type Middleware<C> = (ctx: C, next: Next) => Promise<void>;

/**
 * Runs middlewares outermost first, each deciding whether and when to call `next`. Calling
 * `next` twice is a bug in the middleware and fails loudly rather than running work twice.
 */
export function compose<C>(middlewares: readonly Middleware<C>[]): (ctx: C) => Promise<void> {
  return (ctx) => {
    let lastIndex = -1;
    const dispatch = async (index: number): Promise<void> => {
      if (index <= lastIndex) throw new Error('next() called more than once in one middleware');
      lastIndex = index;
      const middleware = middlewares[index];
      if (!middleware) return;
      await middleware(ctx, () => dispatch(index + 1));
    };
    return dispatch(0);
  };
}
