import { useId } from 'react';
import { readAsDataUri } from './guild-settings/shared.ts';

/** Drawn size of the preview in px (chat.css `.image-field-preview`): also the size to ask the media proxy for. */
export const IMAGE_PREVIEW_SIZE = 64;

/** What the field says: its label, the preview's alternative text, the text without an image, the remove button. */
export interface ImageFieldText {
  label: string;
  preview: string;
  none: string;
  remove: string;
}

/**
 * A labelled image picker with a preview: a guild's icon, a server avatar, a group conversation's icon. `preview`
 * is what to show (a URL or the picked data URI; null: no image); `onChange` gets the picked image as a data URI,
 * or null when it is removed.
 */
export function ImageField({
  text,
  preview,
  onChange,
}: {
  text: ImageFieldText;
  preview: string | null;
  onChange: (image: string | null) => void;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{text.label}</label>
      <div className="image-field-row">
        {preview ? (
          <img
            className="image-field-preview"
            src={preview}
            alt={text.preview}
            width={IMAGE_PREVIEW_SIZE}
            height={IMAGE_PREVIEW_SIZE}
          />
        ) : (
          <span className="image-field-preview empty">{text.none}</span>
        )}
        <input
          id={id}
          type="file"
          accept="image/png,image/jpeg,image/gif,image/webp"
          onChange={async (e) => {
            const file = e.target.files?.[0];
            if (file) onChange(await readAsDataUri(file));
          }}
        />
        {preview && (
          <button type="button" className="secondary" onClick={() => onChange(null)}>
            {text.remove}
          </button>
        )}
      </div>
    </div>
  );
}
