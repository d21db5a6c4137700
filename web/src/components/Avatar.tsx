import { type CSSProperties, type ReactNode, useState } from 'react';
import { useApp } from '../app-context.tsx';
import { type ImageSource, imageUrl, initials } from '../lib/media.ts';

/**
 * The picture of a person or a guild (docs/web.md#pictures), `size` CSS pixels square: the stored image at the
 * size the screen needs, else (no picture, or one that fails to load) the name's initials, never a broken
 * image. `labelled`: the picture stands alone and carries the name (a guild in the rail); otherwise it repeats
 * a name shown beside it and is hidden from assistive technology. `children` are drawn over it (a status dot).
 */
export function Avatar({
  source,
  name,
  size,
  labelled = false,
  className,
  children,
}: {
  source: ImageSource | null;
  name: string;
  size: number;
  labelled?: boolean;
  className?: string;
  children?: ReactNode;
}) {
  const { discovery } = useApp();
  const url = source ? imageUrl(discovery.endpoints.media, source, size) : null;
  // The URL that failed: a new hash (a live change) gets its own try.
  const [failed, setFailed] = useState<string | null>(null);
  // Once a picture has shown, a change of picture keeps the old one until the new one is decoded (the same
  // element, another src) instead of flashing the initials.
  const [shown, setShown] = useState(false);
  const picture = url !== null && url !== failed;
  // A picture removed: the next one starts over behind the initials (state adjusted while rendering).
  if (!picture && shown) setShown(false);
  const showInitials = !picture || !shown;
  const style = { '--avatar-size': `${size}px` } as CSSProperties;
  const classes = `avatar${className ? ` ${className}` : ''}`;
  // Drawn from an attribute, so the letters are never text that a control's name must contain.
  const letters = <span className="avatar-initials" data-initials={initials(name, size < 40 ? 2 : 3)} />;
  if (!picture && labelled) {
    return (
      <span className={classes} style={style} role="img" aria-label={name}>
        {letters}
        {children}
      </span>
    );
  }
  return (
    <span className={classes} style={style} aria-hidden={labelled ? undefined : true}>
      {picture && (
        <img
          className="avatar-image"
          src={url}
          alt={labelled ? name : ''}
          width={size}
          height={size}
          loading="lazy"
          decoding="async"
          onLoad={() => setShown(true)}
          onError={() => {
            setFailed(url);
            setShown(false);
          }}
        />
      )}
      {showInitials && letters}
      {children}
    </span>
  );
}
